"""Checks of the torch arms of format-2 specs (plugins/python/arms/_torch_shaped.py through
torch_arms.py's arms), called by test_torch_shaped.cpp with specs as the python plugin hands them
to arms (the host parses each; SPECS below are more of them), or run alone on a JSON dump of
those specs with another torch (a GPU host's):

    python3 tests/python/torch_shaped_check.py SPECS.json [--device cuda]

Each spec runs twice on random inputs: computed in float64 (its compute made f64, float tensors
f64), compared with a float64 numpy reference written here at 1e-9; and as the spec says (its
dtypes, its compute), compared at the precision of the coarser of the two. Integer outputs must
be exact; some specs put NaN and ties into the argmax rows (first NaN, else first extreme).
"""
import copy
import importlib.util
import json
import pathlib
import sys
import types

try:
    import kq
except ImportError:  # run alone: the kq module's Python part (kq.Tensor aside), and the arms
    _root = pathlib.Path(__file__).resolve().parents[2] / "plugins/python"
    _spec = importlib.util.spec_from_file_location("kq", _root / "kq_api.py")
    kq = importlib.util.module_from_spec(_spec)
    sys.modules["kq"] = kq
    _spec.loader.exec_module(kq)
    sys.path.insert(0, str(_root / "arms"))

# ---- the specs, beyond tests/data/specs_v2: (dims for the check, YAML text)


def _yaml(op, dims, body):
    point = ", ".join("%s: %d" % kv for kv in dims.items())
    return ("kq_spec: 2\nop: %s\n%s\ntiming: {points: [{%s}]}\n"
            "decision: {baseline: torch_compile}\n" % (op, body.strip("\n"), point))


_EXTRA = {
    "scans": ({"M": 3, "N": 7}, """
dims: {M: free, N: reduced}
inputs: {x: {dtype: f32, shape: [M, N]}}
outputs: {c: {dtype: f32, shape: [M, N]}, p: {dtype: f32, shape: [M, N]}}
semantics: |
  c[m, n] = cumsum(n, x[m, n], exclusive, reverse)
  p[m, n] = cumprod(n, x[m, n], exclusive) + cumsum(n, x[m, n]) * 2
compare: {c: {bound: accumulation}, p: {rtol: 1e-4}}
"""),
    "group_view": ({"N": 2, "C": 7, "G": 2, "CG": 3, "H": 3, "W": 4}, """
dims: {N: free, C: free, G: free, CG: reduced, H: reduced, W: reduced}
inputs: {x: {dtype: bf16, shape: [N, C, H, W]}}
outputs: {y: {dtype: f32, shape: [N, G]}, v: {dtype: f32, shape: [N, G, CG]}}
semantics: |
  v[n, g, j] = sum((h, w), x[n, g * CG + j, h, w])
  y[n, g] = sum(j, v[n, g, j]) / (CG * H * W)
compare: {y: {bound: accumulation}, v: {bound: accumulation}}
"""),
    # Pointwise activations that torch runs in one kernel (_torch_activations.py), and four
    # selects that are none: f's branches read different tensors, h's does not vanish at 0, k
    # takes X at 0 (torch's leaky_relu takes c * X there), iq's stays in exact integers.
    "activations": ({"M": 4, "N": 9}, """
dims: {M: free, N: free}
params: {alpha: 1.6732632423543772, scale: 1.0507009873554805, slope: 0.01, thr: 1.5}
inputs:
  x: {dtype: f32, shape: [M, N]}
  z: {dtype: f32, shape: [M, N]}
  q: {dtype: i32, shape: [M, N]}
outputs:
  a: {dtype: f32, shape: [M, N]}
  b: {dtype: f32, shape: [M, N]}
  c: {dtype: f32, shape: [M, N]}
  d: {dtype: f32, shape: [M, N]}
  e: {dtype: f32, shape: [M, N]}
  f: {dtype: f32, shape: [M, N]}
  g: {dtype: f32, shape: [M, N]}
  h: {dtype: f32, shape: [M, N]}
  k: {dtype: f32, shape: [M, N]}
  iq: {dtype: i64, shape: [M, N]}
semantics: |
  a[m, n] = select(x[m, n] > 0, scale * x[m, n], scale * alpha * (exp(x[m, n]) - 1))
  b[m, n] = select(0 < x[m, n], x[m, n], slope * x[m, n])
  c[m, n] = select(x[m, n] > thr, x[m, n], log(1 + exp(x[m, n])))
  d[m, n] = clamp(x[m, n] + 3, 0, 6) / 6
  e[m, n] = x[m, n] * sigmoid(x[m, n])
  f[m, n] = select(x[m, n] > 0, x[m, n], slope * z[m, n])
  g[m, n] = select(x[m, n] + z[m, n] > 0, x[m, n] + z[m, n], 0.2 * (x[m, n] + z[m, n]))
  h[m, n] = select(x[m, n] > 0, x[m, n], exp(x[m, n]))
  k[m, n] = select(x[m, n] >= 0, x[m, n], slope * x[m, n])
  iq[m, n] = select(q[m, n] > 0, q[m, n], 3 * q[m, n])
compare:
  a: {rtol: 1e-5, atol: 1e-6}
  b: {rtol: 1e-5, atol: 1e-6}
  c: {rtol: 1e-5, atol: 1e-6}
  d: {rtol: 1e-5, atol: 1e-6}
  e: {rtol: 1e-5, atol: 1e-6}
  f: {rtol: 1e-5, atol: 1e-6}
  g: {rtol: 1e-5, atol: 1e-6}
  h: {rtol: 1e-5, atol: 1e-6}
  k: {rtol: 1e-5, atol: 1e-6}
  iq: bitwise
"""),
    # log-softmax as torch's one function (_torch_library.py), from bf16 into f32: widened.
    "log_softmax_mixed": ({"M": 3, "N": 10}, """
dims: {M: free, N: reduced}
inputs: {x: {dtype: bf16, shape: [M, N]}}
outputs: {y: {dtype: f32, shape: [M, N]}}
temporaries: {mx: {shape: [M]}, l: {shape: [M]}}
semantics: |
  mx[m] = max(n, x[m, n])
  l[m] = log(sum(n, exp(x[m, n] - mx[m])))
  y[m, n] = x[m, n] - mx[m] - l[m]
compare: {y: {rtol: 1e-5, atol: 1e-5}}
"""),
    # A scalar output, written through out= in eager.
    "mse": ({"M": 3, "N": 5}, """
dims: {M: reduced, N: reduced}
inputs: {p: {dtype: f32, shape: [M, N]}, q: {dtype: f32, shape: [M, N]}}
outputs: {loss: {dtype: f32, shape: []}}
semantics: |
  loss = sum((m, n), (p[m, n] - q[m, n]) * (p[m, n] - q[m, n])) / (M * N)
compare: {loss: {bound: accumulation}}
"""),
    # The norms torch has one function for (_torch_library.py), as KernelBench 33, 34, 35, 40.
    "batch_norm": ({"B": 3, "C": 4, "H": 2, "W": 5}, """
dims: {B: reduced, C: free, H: reduced, W: reduced}
params: {eps: 1e-5}
inputs:
  x: {dtype: f32, shape: [B, C, H, W]}
  w: {dtype: f32, shape: [C]}
  b: {dtype: f32, shape: [C]}
outputs: {y: {dtype: f32, shape: [B, C, H, W]}}
temporaries: {mean: {shape: [C]}, var: {shape: [C]}, rstd: {shape: [C]}}
semantics: |
  mean[c] = sum((n, h, v), x[n, c, h, v]) / (B * H * W)
  var[c] = sum((n, h, v), (x[n, c, h, v] - mean[c]) * (x[n, c, h, v] - mean[c])) / (B * H * W)
  rstd[c] = 1 / sqrt(var[c] + eps)
  y[n, c, h, v] = (x[n, c, h, v] - mean[c]) * rstd[c] * w[c] + b[c]
compare: {y: {bound: accumulation}}
"""),
    "instance_norm": ({"B": 2, "C": 3, "H": 4, "W": 5}, """
dims: {B: free, C: free, H: reduced, W: reduced}
params: {eps: 1e-5}
inputs: {x: {dtype: f32, shape: [B, C, H, W]}}
outputs: {y: {dtype: f32, shape: [B, C, H, W]}}
temporaries: {mean: {shape: [B, C]}, var: {shape: [B, C]}, rstd: {shape: [B, C]}}
semantics: |
  mean[b, c] = sum((h, w), x[b, c, h, w]) / (H * W)
  var[b, c] = sum((h, w), (x[b, c, h, w] - mean[b, c]) * (x[b, c, h, w] - mean[b, c])) / (H * W)
  rstd[b, c] = 1 / sqrt(var[b, c] + eps)
  y[b, c, h, w] = (x[b, c, h, w] - mean[b, c]) * rstd[b, c]
compare: {y: {bound: accumulation}}
"""),
    "group_norm": ({"B": 2, "G": 3, "CG": 2, "H": 3, "W": 4}, """
dims: {B: free, G: free, CG: reduced, H: reduced, W: reduced}
params: {eps: 1e-5}
inputs:
  x: {dtype: f32, shape: [B, G, CG, H, W]}
  w: {dtype: f32, shape: [G, CG]}
  b: {dtype: f32, shape: [G, CG]}
outputs: {y: {dtype: f32, shape: [B, G, CG, H, W]}}
temporaries: {mean: {shape: [B, G]}, var: {shape: [B, G]}, rstd: {shape: [B, G]}}
semantics: |
  mean[n, g] = sum((j, h, v), x[n, g, j, h, v]) / (CG * H * W)
  var[n, g] = sum((j, h, v), (x[n, g, j, h, v] - mean[n, g]) * (x[n, g, j, h, v] - mean[n, g])) / (CG * H * W)
  rstd[n, g] = 1 / sqrt(var[n, g] + eps)
  y[n, g, j, h, v] = (x[n, g, j, h, v] - mean[n, g]) * rstd[n, g] * w[g, j] + b[g, j]
compare: {y: {bound: accumulation}}
"""),
    "layer_norm3": ({"B": 2, "C": 3, "H": 4, "W": 5}, """
dims: {B: free, C: reduced, H: reduced, W: reduced}
params: {eps: 1e-5}
inputs:
  x: {dtype: f32, shape: [B, C, H, W]}
  w: {dtype: f32, shape: [C, H, W]}
  b: {dtype: f32, shape: [C, H, W]}
outputs: {y: {dtype: f32, shape: [B, C, H, W]}}
temporaries: {mean: {shape: [B]}, var: {shape: [B]}, rstd: {shape: [B]}}
semantics: |
  mean[n] = sum((c, h, v), x[n, c, h, v]) / (C * H * W)
  var[n] = sum((c, h, v), (x[n, c, h, v] - mean[n]) * (x[n, c, h, v] - mean[n])) / (C * H * W)
  rstd[n] = 1 / sqrt(var[n] + eps)
  y[n, c, h, v] = (x[n, c, h, v] - mean[n]) * rstd[n] * w[c, h, v] + b[c, h, v]
compare: {y: {bound: accumulation}}
"""),
    "argmin2": ({"B": 4, "H": 3, "W": 5}, """
dims: {B: free, H: reduced, W: reduced}
inputs: {x: {dtype: f32, shape: [B, H, W]}}
outputs: {i: {dtype: i32, shape: [B]}, k: {dtype: i64, shape: []}}
semantics: |
  i[b] = argmin((h, w), x[b, h, w])
  k = argmax((b, h), x[b, h, W - 1])
compare: {i: bitwise, k: bitwise}
"""),
    "diag_gather": ({"N": 5, "K": 3}, """
dims: {N: free, K: free}
inputs:
  x: {dtype: f32, shape: [N, N]}
  y: {dtype: f32, shape: [K, N]}
  t: {dtype: i32, shape: [N]}
outputs: {d: {dtype: f32, shape: [N]}, r: {dtype: f32, shape: [N]}}
semantics: |
  d[i] = x[i, i] + y[t[i], i]
  r[i] = x[N - 1 - i, i] * t[i]
compare: {d: {ulp: 1}, r: {ulp: 1}}
"""),
    "masked": ({"M": 4, "N": 6}, """
dims: {M: free, N: reduced}
inputs: {x: {dtype: f32, shape: [M, N]}, mask: {dtype: bool, shape: [M, N]}}
outputs:
  y: {dtype: f32, shape: [M, N]}
  cnt: {dtype: i32, shape: [M]}
  top: {dtype: f32, shape: [M]}
temporaries: {a: {shape: [M, N]}}
semantics: |
  a[m, n] = select(mask[m, n], x[m, n], 0) + (x[m, n] > 0) * 2 + relu(x[m, n])
  y[m, n] = a[m, n] + clamp(x[m, n], -1, 1) + max(x[m, n], 0.5) + min(1 - x[m, n], x[m, n])
  cnt[m] = sum(n, mask[m, n])
  top[m] = max(n, select(mask[m, n], x[m, n], -inf))
compare: {y: {ulp: 4}, cnt: bitwise, top: bitwise}
"""),
    "index_values": ({"M": 3, "N": 4}, """
dims: {M: free, N: free}
compute: f64
inputs:
  x: {dtype: f64, shape: [M, N]}
  w: {dtype: f64, shape: [N]}
  v: {dtype: f64, shape: [M]}
outputs:
  yt: {dtype: f64, shape: [N, M]}
  o: {dtype: f64, shape: [M, N]}
  total: {dtype: f64, shape: []}
  pr: {dtype: f64, shape: [M]}
  mn: {dtype: f64, shape: [N]}
  r: {dtype: f64, shape: [M, N]}
semantics: |
  yt[n, m] = x[m, n] * w[n]
  o[a, b] = v[a] * w[b]
  total = sum((m, n), x[m, n]) / (M * N)
  pr[m] = prod(n, x[m, n])
  mn[n] = min(m, x[m, n] * 2)
  r[m, n] = x[m, n] * n + m - sqrt(N)
compare:
  yt: {ulp: 1}
  o: {ulp: 1}
  total: {bound: accumulation}
  pr: {ulp: 8}
  mn: bitwise
  r: {ulp: 2}
"""),
    "gather_temp": ({"M": 4, "N": 6}, """
dims: {M: free, N: reduced}
inputs: {x: {dtype: f32, shape: [M, N]}, t: {dtype: i64, shape: [M]}}
outputs: {y: {dtype: f32, shape: [M]}, z: {dtype: f32, shape: [M]}}
temporaries: {s: {dtype: i64, shape: [M]}}
semantics: |
  y[m] = x[m, t[m] + 1]
  s[m] = argmax(n, x[m, n])
  z[m] = x[m, s[m]] - max(n, x[m, n])
compare: {y: bitwise, z: bitwise}
"""),
    "mm_f32": ({"B": 2, "M": 5, "N": 3, "K": 7}, """
dims: {B: free, M: free, N: free, K: reduced}
inputs:
  a: {dtype: f32, shape: [M, K]}
  b: {dtype: f32, shape: [N, K]}
  x: {dtype: f32, shape: [B, M, K]}
  y: {dtype: f32, shape: [B, K, N]}
outputs:
  c: {dtype: f32, shape: [M, N]}
  z: {dtype: f32, shape: [B, M, N]}
semantics: |
  c[i, j] = sum(k, a[i, k] * b[j, k])
  z[q, i, j] = sum(k, x[q, i, k] * y[q, k, j])
compare: {c: {bound: accumulation}, z: {bound: accumulation}}
"""),
    "matmul": ({"B": 2, "M": 5, "N": 3, "K": 7}, """
dims: {B: free, M: free, N: free, K: reduced}
inputs:
  a: {dtype: f32, shape: [B, K, M]}
  b: {dtype: f32, shape: [K, N]}
  v: {dtype: f32, shape: [K]}
outputs:
  c: {dtype: f32, shape: [B, M, N]}
  t: {dtype: f32, shape: [M, M]}
  g: {dtype: f32, shape: [B, M]}
semantics: |
  c[z, i, j] = sum(k, a[z, k, i] * b[k, j])
  t[i, j] = select(j >= i, sum(k, a[0, k, i] * a[1, k, j]), 0)
  g[z, i] = sum(k, a[z, k, i] * v[k])
compare: {c: {bound: accumulation}, t: {bound: accumulation}, g: {bound: accumulation}}
"""),
    # 16-bit products computed in f32: a bias after the product (which must stay f32) and a
    # bare product (which may be rounded once, into the output).
    "linear_bf16": ({"M": 5, "N": 3, "K": 33}, """
dims: {M: free, N: free, K: reduced}
compute: f32
inputs: {x: {dtype: bf16, shape: [M, K]}, w: {dtype: bf16, shape: [N, K]},
         bias: {dtype: bf16, shape: [N]}}
outputs: {y: {dtype: bf16, shape: [M, N]}}
semantics: |
  y[m, n] = sum(k, x[m, k] * w[n, k]) + bias[n]
compare: {y: {bound: accumulation}}
"""),
    "mm_bf16": ({"M": 4, "N": 6, "K": 9}, """
dims: {M: free, N: free, K: reduced}
compute: f32
inputs: {a: {dtype: bf16, shape: [K, M]}, b: {dtype: bf16, shape: [K, N]}}
outputs: {c: {dtype: bf16, shape: [N, M]}}
semantics: |
  c[j, i] = sum(k, a[k, i] * b[k, j])
compare: {c: {bound: accumulation}}
"""),
    "view_flat": ({"N": 13, "G": 3, "CG": 4}, """
dims: {N: free, G: free, CG: free}
inputs: {x: {dtype: f32, shape: [N]}}
outputs: {total: {dtype: f64, shape: []}, flat: {dtype: f32, shape: [G, CG]}}
semantics: |
  total = sum(i, x[i])
  flat[g, j] = x[g * CG + j] + total
compare: {total: {bound: accumulation}, flat: {bound: accumulation}}
"""),
    # A derived output length and a stepped window: narrow and slice views, not gathers.
    "window_stride": ({"M": 3, "N": 9}, """
dims: {M: free, N: free, NO: {derived: "(N - 3) / 2 + 1"}}
inputs: {x: {dtype: f32, shape: [M, N]}}
outputs: {y: {dtype: f32, shape: [M, NO]}}
semantics: |
  y[m, j] = x[m, 2 * j + 1] + x[m, 2 * j] + x[m, 2 * j + 2]
compare: {y: {rtol: 1e-6}}
"""),
    # Windows with their ranges written: disjoint (stride = window: an unflatten view) and
    # overlapping (stride 1: an unfold view).
    "window_mean": ({"M": 2, "N": 14}, """
dims: {M: free, N: free, NO: {derived: "(N - 3) / 3 + 1"}}
inputs: {x: {dtype: f32, shape: [M, N]}}
outputs: {y: {dtype: f32, shape: [M, NO]}}
semantics: |
  y[m, j] = sum(p : 3, x[m, 3 * j + p]) / 3
compare: {y: {bound: accumulation}}
"""),
    "window_slide": ({"M": 2, "N": 9}, """
dims: {M: free, N: free, NO: {derived: "N - 4 + 1"}}
inputs: {x: {dtype: f32, shape: [M, N]}}
outputs: {y: {dtype: f32, shape: [M, NO]}}
semantics: |
  y[m, j] = max(p : 4, x[m, j + p])
compare: {y: {ulp: 0}}
"""),
    # Padded inputs: KernelBench 41's window (-inf all round, an unfold with dilation 3), a
    # strided 2-d average (zeros counted), and a causal sum whose subscript runs down along the
    # window (a gather into the padded tensor).
    "pad_max1d": ({"M": 2, "N": 20}, """
dims: {M: free, N: free, NO: {derived: "(N + 2 * 4 - 3 * (8 - 1) - 1) / 1 + 1"}}
inputs: {x: {dtype: f32, shape: [M, N], pad: -inf}}
outputs: {y: {dtype: f32, shape: [M, NO]}}
semantics: |
  y[m, j] = max(k : 8, x[m, j + 3 * k - 4])
compare: {y: {ulp: 0}}
"""),
    "pad_avg2d": ({"B": 2, "H": 7, "W": 10}, """
dims:
  B: free
  H: free
  W: free
  OH: {derived: "(H + 2 - 3) / 2 + 1"}
  OW: {derived: "(W + 2 - 3) / 2 + 1"}
inputs: {x: {dtype: f32, shape: [B, H, W], pad: 0}}
outputs: {y: {dtype: f32, shape: [B, OH, OW]}}
semantics: |
  y[b, i, j] = sum((p : 3, q : 3), x[b, 2 * i + p - 1, 2 * j + q - 1]) / 9
compare: {y: {bound: accumulation}}
"""),
    "pad_causal": ({"M": 3, "N": 6}, """
dims: {M: free, N: free}
inputs: {x: {dtype: f32, shape: [M, N], pad: 0.5}}
outputs: {y: {dtype: f32, shape: [M, N]}}
semantics: |
  y[m, j] = sum(k : 3, x[m, j - k]) + x[m, j + 2]
compare: {y: {bound: accumulation}}
"""),
}

SPECS = {op: _yaml(op, dims, body) for op, (dims, body) in _EXTRA.items()}

# Specs the arms decline, and what their reason says.
_DECLINED = {
    "temporary_dim": ({"M": 3, "K": 4}, """
dims: {M: free, K: free}
inputs: {x: {dtype: f32, shape: [M]}}
outputs: {y: {dtype: f32, shape: [M]}}
temporaries: {t: {shape: [K]}}
semantics: |
  t[k] = k * 2
  y[m] = x[m] + sum(k, t[k])
compare: {y: {bound: accumulation}}
""", "dim K sizes no input or output"),
    "pad_reversed": ({"M": 3, "N": 4}, """
dims: {M: free, N: free}
inputs: {x: {dtype: f32, shape: [M, N], pad: 0}}
outputs: {y: {dtype: f32, shape: [M, N]}}
semantics: |
  y[m, j] = x[m, N - 2 - j]
compare: {y: {ulp: 0}}
""", "runs down over a dim's length"),
}
DECLINED = {op: _yaml(op, dims, body) for op, (dims, body, _) in _DECLINED.items()}


def declined_problems(spec):
    """What is wrong with the arms' refusal of a spec of DECLINED."""
    import torch_arms

    want = _DECLINED[spec.op][2]
    out = []
    for arm in (torch_arms.TorchEagerCpu(), torch_arms.TorchCompileCpu()):
        why = arm.supports(spec)
        if why is None or (want not in why and "has no torch.compile" not in why):
            out.append("%s: %r, not a refusal saying %r" % (arm.name, why, want))
    return out

# Dims of the check for the shipped specs.
_DIMS = {"softmax": {"M": 5, "N": 7}, "layer_norm": {"M": 4, "N": 9}, "argmax": {"M": 6, "N": 11},
         "cross_entropy": {"M": 5, "N": 8}, "cumsum_reverse": {"M": 3, "N": 6},
         "group_sum": {"B": 3, "G": 2, "C": 4, "K": 8}, "window_max3": {"M": 4, "N": 9}}
_DIMS.update({op: dims for op, (dims, _) in _EXTRA.items()})

# Integer inputs: [0, bound(dims)).
_RANGES = {
    "cross_entropy": {"t": lambda d: d["N"]},
    "group_sum": {"pick": lambda d: d["C"]},
    "diag_gather": {"t": lambda d: d["K"]},
    "masked": {"mask": lambda d: 2},
    "gather_temp": {"t": lambda d: d["N"] - 1},
    "activations": {"q": lambda d: 7},
}
# Specs whose first input gets NaN and ties in its first rows.
_NAN = {"argmax", "argmin2", "gather_temp"}

# What the generated source says (readable code, views where they are views).
_EXPECT = {
    "softmax": ["y_out.copy_(torch.softmax(x, dim=1))"],
    "log_softmax_mixed": ["y_out.copy_(torch.log_softmax(x.to(DT), dim=1))"],
    "layer_norm": ["mean = x.sum(dim=1) / N", "mean_out.copy_(mean)", "eps = 1e-05",
                   "rstd = 1.0 / torch.sqrt(var + eps)"],
    "argmax": ["idx_out.copy_(x.argmax(dim=1))"],
    "cross_entropy": ["loss_out[...] = F.cross_entropy(x, t.long())"],
    "mse": ["loss_out[...] = ((p - q) * (p - q)).sum() / (M * N)"],
    "batch_norm": ["y_out.copy_(torch.batch_norm(x, w, b, None, None, True, 0.0, 1e-05, True))"],
    "instance_norm": ["y_out.copy_(torch.instance_norm(x, None, None, None, None, True, 0.0, "
                      "1e-05, True))"],
    "group_norm": ["y_out.copy_(F.group_norm(x.flatten(1, 2), x.shape[1], w.flatten(), "
                   "b.flatten(), 1e-05).view_as(y_out))"],
    "layer_norm3": ["y_out.copy_(F.layer_norm(x, x.shape[1:], w, b, 1e-05))"],
    "scans": ["x.flip(1)", "cumsum(dim=1).flip(1)", "cumprod(dim=1)"],
    "group_view": ["x.narrow(1, 0, G * CG).unflatten(1, (G, CG)).sum(dim=(3, 4))",
                   "v.sum(dim=2)"],
    "cumsum_reverse": ["c_out.copy_(shift(x.flip(1), 1, 0.0).cumsum(dim=1).flip(1))"],
    "group_sum": ["x.narrow(1, 0, G * C).unflatten(1, (G, C)) * w", "pick"],
    "argmin2": ["x.flatten(1).argmin(dim=-1)", "x[:, :, W - 1].argmax()"],
    "diag_gather": ["x.diagonal(0, 0, 1)", "y[t.long(), torch.arange(N, device=x.device)]"],
    "index_values": ["yt_out.copy_((x * w).T)", "o_out.copy_(v[:, None] * w)",
                     "math.sqrt(N)"],
    "gather_temp": ["s = x.argmax(dim=1)", "x[torch.arange(M, device=x.device), s]"],
    "view_flat": ["x.narrow(0, 0, G * CG).unflatten(0, (G, CG)) + total"],
    "matmul": ["c_out.copy_(torch.einsum('zki,kj->zij', a, b))",
               "torch.einsum('ki,kj->ij', a[0], a[1])", "g_out.copy_((a * v[:, None]).sum(dim=1))"],
    "mm_f32": ["c_out.copy_(torch.einsum('ik,jk->ij', a, b))",
               "z_out.copy_(torch.einsum('qik,qkj->qij', x, y))"],
    "masked": ["(x > 0.0).to(DT) * 2.0", "torch.clamp_min(x, 0.5)", "mask.long().sum(dim=1)"],
    "window_mean": ["x.narrow(1, 0, NO * 3).unflatten(1, (NO, 3)).sum(dim=2)"],
    "window_max3": ["torch.maximum(torch.maximum(x.narrow(1, 0, NO), x.narrow(1, 1, NO)), "
                    "x.narrow(1, 2, NO))"],
    "window_slide": ["x.narrow(1, 0, NO - 1 + 4).unfold(1, 4, 1).amax(dim=2)"],
    "pad_max1d": ["x = F.pad(x, (4, max(0, 1 * (NO - 1) + 3 * (8 - 1) + -4 + 1 - N)), "
                  "value=-math.inf)",
                  "y_out.copy_(x.narrow(1, 0, NO - 1 + 22).unfold(1, 22, 1)[..., ::3]"
                  ".amax(dim=2))"],
    "pad_avg2d": [".unfold(1, 3, 2).narrow(2, 0, 2 * (OW - 1) + 3).unfold(2, 3, 2)"
                  ".sum(dim=(3, 4)) / 9"],
    "pad_causal": ["value=0.5", "+ 2]"],
    "window_stride": ["x.narrow(1, 1, 2 * (NO - 1) + 1)[:, ::2]", "x.narrow(1, 0, 2 * (NO - 1) "
                      "+ 1)[:, ::2]"],
    "activations": ["a_out.copy_(torch._C._nn.elu(x, alpha, scale, 1.0))",
                    "b_out.copy_(torch._C._nn.leaky_relu(x, slope))",
                    "c_out.copy_(torch._C._nn.softplus(x, 1.0, thr))",
                    "d_out.copy_(torch._C._nn.hardsigmoid(x))", "e_out.copy_(torch._C._nn.silu(x))",
                    "f_out.copy_(torch.where(x > 0.0, x, slope * z))",
                    "g_out.copy_(torch._C._nn.leaky_relu(x + z, 0.2))",
                    "h_out.copy_(torch.where(x > 0.0, x, torch.exp(x)))",
                    "k_out.copy_(torch.where(x >= 0.0, x, slope * x))",
                    "iq_out.copy_(torch.where(q.long() > 0, q.long(), 3 * q.long()))"],
}

# Where the eager arm's source differs: an output's last operation writes it through out=.
_EXPECT_EAGER = dict(_EXPECT, **{
    "index_values": ["yt_out.copy_((x * w).T)", "torch.mul(v[:, None], w, out=o_out)",
                     "math.sqrt(N)"],
    "matmul": ["c_out.copy_(torch.einsum('zki,kj->zij', a, b))",
               "torch.einsum('ki,kj->ij', a[0], a[1])",
               "torch.sum(a * v[:, None], dim=1, out=g_out)"],
    "pad_max1d": ["torch.amax(x.narrow(1, 0, NO - 1 + 22).unfold(1, 22, 1)[..., ::3], dim=2, "
                  "out=y_out)"],
    "window_max3": ["torch.maximum(torch.maximum(x.narrow(1, 0, NO), x.narrow(1, 1, NO)), "
                    "x.narrow(1, 2, NO), out=y_out)"],
    "mm_f32": ["torch.mm(a, b.transpose(-2, -1), out=c_out)", "torch.bmm(x, y, out=z_out)"],
    "mse": ["torch.div(((p - q) * (p - q)).sum(), M * N, out=loss_out)"],
    "view_flat": ["total_out[...] = total",
                  "torch.add(x.narrow(0, 0, G * CG).unflatten(0, (G, CG)), total, out=flat_out)"],
    "window_slide": ["torch.amax(x.narrow(1, 0, NO - 1 + 4).unfold(1, 4, 1), dim=2, out=y_out)"],
    "pad_avg2d": [".unfold(1, 3, 2).narrow(2, 0, 2 * (OW - 1) + 3).unfold(2, 3, 2)"
                  ".sum(dim=(3, 4)), 9.0, out=y_out)"],
    "activations": ["torch._C._nn.elu(x, alpha, scale, 1.0, out=a_out)",
                    "torch._C._nn.leaky_relu(x, slope, out=b_out)",
                    "torch._C._nn.softplus(x, 1.0, thr, out=c_out)",
                    "torch._C._nn.hardsigmoid(x, out=d_out)", "torch._C._nn.silu(x, out=e_out)",
                    "torch.where(x > 0.0, x, slope * z, out=f_out)",
                    "torch._C._nn.leaky_relu(x + z, 0.2, out=g_out)",
                    "torch.where(x > 0.0, x, torch.exp(x), out=h_out)",
                    "torch.where(x >= 0.0, x, slope * x, out=k_out)",
                    "iq_out.copy_(torch.where(q.long() > 0, q.long(), 3 * q.long()))"],
})


# Where torch has one function for the whole program (_torch_library.py): eager writes the
# output through its out= whatever its dtype (torch's kernel rounds once).
_EXPECT_LIBRARY_EAGER = {"softmax": ["torch.ops.aten._softmax.out(x, 1, False, out=y_out)"],
                         # a norm's aten out= operation where this torch has it on the device
                         "batch_norm": [("native_batch_norm.out(x, w, b,", "torch.batch_norm(")],
                         "instance_norm": [("native_batch_norm.out(x.reshape(1, -1",
                                            "torch.instance_norm(")],
                         "group_norm": [("native_group_norm.out(x.flatten(1, 2)",
                                         "F.group_norm(")],
                         "layer_norm3": [("native_layer_norm.out(x, x.shape[1:], w, b, 1e-05, "
                                          "out0=y_out", "F.layer_norm(")],
                         "log_softmax_mixed": ["y_out.copy_(torch.log_softmax(x.to(DT), dim=1))"]}


def _expected_lines(spec, arm):
    """What arm's source for spec must say: the eager arm writes an output of the compute dtype
    through out= (the specs here have one such output at most), one that it rounds by copy_."""
    if arm.kind == "eager" and spec.op in _EXPECT_LIBRARY_EAGER:
        return _EXPECT_LIBRARY_EAGER[spec.op]
    if arm.device == "cuda" and spec.op in _CUDA_EXPECT:  # the 16-bit products' own forms
        import _torch_shaped

        return _CUDA_EXPECT[spec.op][_torch_shaped._mm_out_dtype()]
    into = arm.kind == "eager" and any(t.dtype == spec.compute for t in spec.program.tensors
                                       if t.role == "output")
    return (_EXPECT_EAGER if into else _EXPECT).get(spec.op, [])

# ---- float64 references in numpy: inputs by name (floats as float64, integers as int64), dims


def _ref_softmax(a, d):
    x = a["x"]
    e = _np.exp(x - x.max(1, keepdims=True))
    return {"y": e / e.sum(1, keepdims=True)}


def _ref_layer_norm(a, d):
    x = a["x"]
    mean = x.mean(1)
    var = ((x - mean[:, None]) ** 2).mean(1)
    rstd = 1 / _np.sqrt(var + 1e-5)
    return {"y": (x - mean[:, None]) * rstd[:, None] * a["w"] + a["b"], "mean": mean,
            "rstd": rstd}


def _ref_argmax(a, d):
    return {"idx": _np.argmax(a["x"], 1)}


def _ref_cross_entropy(a, d):
    x, t = a["x"], a["t"]
    mx = x.max(1)
    lse = mx + _np.log(_np.exp(x - mx[:, None]).sum(1))
    return {"loss": _np.mean(lse - x[_np.arange(len(t)), t])}


def _ref_cumsum_reverse(a, d):
    x = a["x"]
    c = _np.stack([x[:, k + 1:].sum(1) for k in range(x.shape[1])], 1)
    return {"c": c, "p": _np.cumprod(1 + x / d["N"], 1)}


def _ref_group_sum(a, d):
    x, w, pick = a["x"], a["w"], a["pick"]
    b, g, c = d["B"], d["G"], d["C"]
    groups = x[:, :g * c].reshape(b, g, c)
    return {"y": (groups * w).sum(2), "z": x[:, _np.arange(g) * c + pick]}


def _ref_scans(a, d):
    x = a["x"]
    n = x.shape[1]
    c = _np.stack([x[:, k + 1:].sum(1) for k in range(n)], 1)
    p = _np.stack([_np.prod(x[:, :k], 1) for k in range(n)], 1)
    return {"c": c, "p": p + 2 * _np.cumsum(x, 1)}


def _ref_group_view(a, d):
    x = a["x"]
    g, cg = d["G"], d["CG"]
    v = x[:, :g * cg].reshape(d["N"], g, cg, d["H"], d["W"]).sum((3, 4))
    return {"v": v, "y": v.sum(2) / (cg * d["H"] * d["W"])}


def _ref_activations(a, d):
    x, z = a["x"], a["z"]
    alpha, scale, slope, thr = 1.6732632423543772, 1.0507009873554805, 0.01, 1.5
    xz = x + z
    return {"a": _np.where(x > 0, scale * x, scale * alpha * (_np.exp(x) - 1)),
            "b": _np.where(x > 0, x, slope * x), "k": _np.where(x >= 0, x, slope * x),
            "c": _np.where(x > thr, x, _np.log(1 + _np.exp(x))),
            "d": _np.clip(x + 3, 0, 6) / 6, "e": x / (1 + _np.exp(-x)),
            "f": _np.where(x > 0, x, slope * z), "g": _np.where(xz > 0, xz, 0.2 * xz),
            "h": _np.where(x > 0, x, _np.exp(x)), "iq": _np.where(a["q"] > 0, a["q"], 3 * a["q"])}


def _ref_log_softmax_mixed(a, d):
    x = a["x"]
    mx = x.max(1, keepdims=True)
    return {"y": x - mx - _np.log(_np.exp(x - mx).sum(1, keepdims=True))}


def _ref_mse(a, d):
    return {"loss": _np.array(((a["p"] - a["q"]) ** 2).mean())}


def _normalized(x, axes):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / _np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + 1e-5)


def _ref_batch_norm(a, d):
    y = _normalized(a["x"], (0, 2, 3))
    return {"y": y * a["w"][None, :, None, None] + a["b"][None, :, None, None]}


def _ref_instance_norm(a, d):
    return {"y": _normalized(a["x"], (2, 3))}


def _ref_group_norm(a, d):
    y = _normalized(a["x"], (2, 3, 4))
    return {"y": y * a["w"][None, :, :, None, None] + a["b"][None, :, :, None, None]}


def _ref_layer_norm3(a, d):
    return {"y": _normalized(a["x"], (1, 2, 3)) * a["w"][None] + a["b"][None]}


def _ref_argmin2(a, d):
    x = a["x"]
    return {"i": _np.argmin(x.reshape(x.shape[0], -1), 1),
            "k": _np.argmax(x[:, :, d["W"] - 1].reshape(-1))}


def _ref_diag_gather(a, d):
    x, y, t = a["x"], a["y"], a["t"]
    i = _np.arange(d["N"])
    return {"d": _np.diagonal(x) + y[t, i], "r": x[d["N"] - 1 - i, i] * t}


def _ref_masked(a, d):
    x, mask = a["x"], a["mask"] != 0
    y = (_np.where(mask, x, 0) + (x > 0) * 2 + _np.where(x > 0, x, 0) + _np.clip(x, -1, 1)
         + _np.maximum(x, 0.5) + _np.minimum(1 - x, x))
    return {"y": y, "cnt": mask.sum(1), "top": _np.where(mask, x, -_np.inf).max(1)}


def _ref_index_values(a, d):
    x, w, u = a["x"], a["w"], a["v"]
    m, n = _np.arange(d["M"])[:, None], _np.arange(d["N"])[None, :]
    return {"yt": (x * w).T, "o": _np.outer(u, w), "total": x.mean(), "pr": _np.prod(x, 1),
            "mn": (x * 2).min(0), "r": x * n + m - _np.sqrt(d["N"])}


def _ref_gather_temp(a, d):
    x, t = a["x"], a["t"]
    rows = _np.arange(d["M"])
    return {"y": x[rows, t + 1], "z": x[rows, _np.argmax(x, 1)] - x.max(1)}


def _ref_matmul(a, d):
    x, b, v = a["a"], a["b"], a["v"]
    return {"c": _np.einsum("zki,kj->zij", x, b), "g": _np.einsum("zki,k->zi", x, v),
            "t": _np.triu(x[0].T @ x[1])}


def _ref_mm_f32(a, d):
    return {"c": a["a"] @ a["b"].T, "z": a["x"] @ a["y"]}


def _ref_linear_bf16(a, d):
    return {"y": a["x"] @ a["w"].T + a["bias"]}


def _ref_mm_bf16(a, d):
    return {"c": (a["a"].T @ a["b"]).T}


def _ref_view_flat(a, d):
    x = a["x"]
    total = x.sum()
    return {"total": total, "flat": x[:d["G"] * d["CG"]].reshape(d["G"], d["CG"]) + total}


def _ref_window_max3(a, d):
    x = a["x"]
    return {"y": _np.maximum(_np.maximum(x[:, :-2], x[:, 1:-1]), x[:, 2:])}


def _ref_window_stride(a, d):
    x, n = a["x"], d["NO"]
    return {"y": x[:, 1:2 * n:2] + x[:, 0:2 * n - 1:2] + x[:, 2:2 * n + 1:2]}


def _ref_window_mean(a, d):
    x, n = a["x"], d["NO"]
    return {"y": x[:, :3 * n].reshape(x.shape[0], n, 3).sum(2) / 3}


def _ref_window_slide(a, d):
    x, n = a["x"], d["NO"]
    return {"y": _np.stack([x[:, p:p + n] for p in range(4)]).max(0)}


def _ref_pad_max1d(a, d):
    x, n = _np.pad(a["x"], ((0, 0), (4, 22)), constant_values=-_np.inf), d["NO"]
    return {"y": _np.stack([x[:, 3 * k:3 * k + n] for k in range(8)]).max(0)}


def _ref_pad_avg2d(a, d):
    x, oh, ow = _np.pad(a["x"], ((0, 0), (1, 2), (1, 2))), d["OH"], d["OW"]
    y = sum(x[:, p:p + 2 * oh:2, q:q + 2 * ow:2] for p in range(3) for q in range(3))
    return {"y": y / 9}


def _ref_pad_causal(a, d):
    x, n = _np.pad(a["x"], ((0, 0), (2, 2)), constant_values=0.5), d["N"]
    return {"y": x[:, 2:2 + n] + x[:, 1:1 + n] + x[:, 0:n] + x[:, 4:4 + n]}


_REFERENCES = {name[5:]: f for name, f in dict(globals()).items() if name.startswith("_ref_")}

_np = None  # numpy, once imported


def missing():
    """Why the checks cannot run here (no torch, no numpy), or None."""
    return kq.missing("numpy") or kq.torch_missing("cpu")


# ---- the checks


def _namespace(spec, **changes):
    s = copy.copy(spec)
    for k, v in changes.items():
        setattr(s, k, v)
    return s


def _inputs(spec, dims, rng, exact, device):
    """Torch tensors for the inputs (float64 ones where `exact`) and their float64 values."""
    import torch

    tensors, values = [], {}
    ranges = _RANGES.get(spec.op, {})
    for t in spec.program.tensors:
        if t.role != "input":
            continue
        shape = [dims[e] if isinstance(e, str) else e for e in t.shape]
        if t.dtype in ("i32", "i64", "bool"):
            a = rng.integers(0, ranges[t.name](dims) if t.name in ranges else 1, size=shape)
        else:
            a = rng.standard_normal(shape)
            if exact and spec.op in _NAN and not values:
                rows = a.reshape(shape[0], -1)
                rows[0, 1::3] = _np.nan
                if shape[0] > 1:
                    rows[1, 0] = rows[1, 2] = rows[1].max() + 1
                    rows[1, 1] = rows[1, 3] = rows[1].min() - 1
        dtype = torch.float64 if exact and t.dtype not in ("i32", "i64", "bool") \
            else kq.torch_dtype(t.dtype)
        x = torch.tensor(a).to(dtype).to(device)
        tensors.append(x)
        values[t.name] = x.cpu().long().numpy() if t.dtype in ("i32", "i64", "bool") \
            else x.cpu().double().numpy()
    return tensors, values


def _outputs(spec, dims, exact, device):
    import torch

    out = []
    for t in spec.program.tensors:
        if t.role == "output":
            shape = [dims[e] if isinstance(e, str) else e for e in t.shape]
            dtype = torch.float64 if exact and t.dtype not in ("i32", "i64", "bool") \
                else kq.torch_dtype(t.dtype)
            out.append(torch.full(shape, 12345, dtype=dtype, device=device))
    return out


_EPS = {"f64": 1e-9, "f32": 1e-4, "f16": 2e-2, "bf16": 4e-2}


def _compare(spec, outputs, want, exact, where):
    problems = []
    decls = [t for t in spec.program.tensors if t.role == "output"]
    for t, got in zip(decls, outputs):
        ref = _np.asarray(want[t.name])
        g = got.cpu()
        if t.dtype in ("i32", "i64", "bool"):
            g = g.long().numpy()
            ok = g.shape == ref.shape and (g == ref.astype(_np.int64)).all()
        else:
            g = g.double().numpy()
            eps = 1e-9 if exact else max(_EPS[t.dtype], _EPS[spec.compute])
            scale = max(1.0, float(_np.nanmax(_np.abs(ref)))) if ref.size else 1.0
            ok = g.shape == ref.shape and _np.allclose(g, ref, rtol=eps, atol=eps * scale,
                                                       equal_nan=True)
        if not ok:
            problems.append("%s: output %s differs from the reference:\n got %r\nwant %r"
                            % (where, t.name, g, ref))
    return problems


def _arms(device, names=None):
    import torch_arms

    arms = [torch_arms.TorchEagerCpu(), torch_arms.TorchCompileCpu()]
    if device == "cuda":
        arms = [torch_arms.TorchEager(), torch_arms.TorchCompile()] + arms
    return [a for a in arms if names is None or a.name in names]


# What the CUDA arms' source says, with torch.mm's out_dtype (True) and without: a 16-bit
# product before an epilogue comes back in f32, else the operands are widened; a bare one runs
# in 16 bits, rounded once into the output. On the CPU (torch 1.13's einsum rounds bf16 sums to
# bf16) the operands are always widened.
_CUDA_EXPECT = {
    "linear_bf16": {True: ["torch.mm(x, w.t(), out_dtype=DT) + bias"],
                    False: ["x, w, bias = x.to(DT), w.to(DT), bias.to(DT)"]},
    "mm_bf16": {True: ["c_out.copy_(torch.einsum('ki,kj->ij', a, b).T)"],
                False: ["c_out.copy_(torch.einsum('ki,kj->ij', a, b).T)"]},
}
_EXPECT["linear_bf16"] = ["x, w, bias = x.to(DT), w.to(DT), bias.to(DT)"]
_EXPECT["mm_bf16"] = ["a, b = a.to(DT), b.to(DT)"]


def _cuda_source_problems(spec):
    import _torch_shaped

    problems = []
    saved = list(_torch_shaped._MM_OUT_DTYPE)
    try:
        for mm_out, lines in _CUDA_EXPECT.get(spec.op, {}).items():
            _torch_shaped._MM_OUT_DTYPE[:] = [mm_out]
            source = _torch_shaped.source(spec, "eager", "cuda")
            problems += ["cuda source (out_dtype %s) lacks %r:\n%s" % (mm_out, line, source)
                         for line in lines if line not in source]
    finally:
        _torch_shaped._MM_OUT_DTYPE[:] = saved
    return problems


def _f64_cuda_problems(spec):
    """In float64 on CUDA the eager arm keeps hardsigmoid's own operations: torch's CUDA kernel
    multiplies by a float 1/6 (3e-8 off in float64); the other activations stay one call."""
    import _torch_shaped

    if spec.op != "activations":
        return []
    source = _torch_shaped.source(_namespace(spec, compute="f64"), "eager", "cuda")
    want = ["torch._C._nn.elu(x, alpha, scale, 1.0", "torch.clamp(x + 3.0, 0.0, 6.0) / 6.0"]
    problems = ["f64 cuda source lacks %r:\n%s" % (w, source) for w in want if w not in source]
    if "hardsigmoid" in source:
        problems.append("f64 cuda source calls hardsigmoid:\n%s" % source)
    return problems


def _precision_problems(spec):
    """The f32 products' precision inside a call of torch_arms._Reductions: IEEE ("highest")
    under the spec's f32 contract, TF32 ("high") where it admits TF32, whatever it was before;
    after the call, what it was."""
    import types

    import torch
    import torch_arms

    problems = []
    saved = torch.get_float32_matmul_precision()
    try:
        for admits in (False, True):
            s = types.SimpleNamespace(**vars(spec))
            s.tf32 = admits
            want = "high" if admits else "highest"
            for before in ("high", "highest"):
                torch.set_float32_matmul_precision(before)
                with torch_arms._Reductions(s):
                    inside = torch.get_float32_matmul_precision()
                after = torch.get_float32_matmul_precision()
                if inside != want:
                    problems.append("%s (tf32 %s, %s before): %s inside a call, not %s"
                                    % (spec.op, admits, before, inside, want))
                if after != before:
                    problems.append("%s (tf32 %s): %s after a call, not %s"
                                    % (spec.op, admits, after, before))
    finally:
        torch.set_float32_matmul_precision(saved)
    return problems


def _reductions_problems(spec):
    """torch_arms._Reductions on the product specs: the flags off inside a call (the spec
    computes in f32), as they were after it, and the f32 products' precision the spec's;
    softmax, layer norm and argmax hold no product."""
    import torch
    import torch_arms

    has = torch_arms._has_product(spec)
    products, none = set(_CUDA_EXPECT) | {"matmul"}, {"softmax", "layer_norm", "argmax"}
    if (spec.op in products and not has) or (spec.op in none and has):
        return ["_has_product is %s on %s" % (has, spec.op)]
    if not has:
        return []
    problems = _precision_problems(spec)
    m = torch.backends.cuda.matmul
    # torch 1.13 has the f16 flag alone; 2.x both.
    flags = [f for f in torch_arms._Reductions._FLAGS if torch_arms._has_flag(m, f)]
    if not flags:
        return problems
    before = [getattr(m, f) for f in flags]
    for f in flags:
        setattr(m, f, True)
    with torch_arms._Reductions(spec):
        problems += ["%s: %s allowed inside a call" % (spec.op, f) for f in flags
                     if getattr(m, f) is not False]
    problems += ["%s: %s not put back after the call" % (spec.op, f) for f in flags
                 if getattr(m, f) is not True]
    for f, v in zip(flags, before):
        setattr(m, f, v)
    return problems


def check(spec, device="cpu", verbose=True, arms=None):
    """Runs each torch arm on the spec, in float64 and as the spec says; the problems found."""
    global _np
    import numpy
    import torch

    _np = numpy
    problems = []
    dims = dict(_DIMS.get(spec.op) or {})
    reference = _REFERENCES.get(spec.op)
    if not dims or reference is None:  # a spec this file does not know yet: run it only
        print("%s: no reference in torch_shaped_check.py: run, not compared" % spec.op)
        dims = {d.name: 3 for d in spec.program.dims}
    for d in spec.program.dims:  # derived dims: their formulas, / rounding down
        if d.derived:
            dims[d.name] = eval(d.derived.replace("/", "//"), {"__builtins__": {}}, dict(dims))
    rng = numpy.random.default_rng(20261129)
    for arm in _arms(device, arms):
        dev = arm.device
        why = arm.supports(spec)
        if why is not None:
            if arm.kind == "compiled" and not hasattr(torch, "compile"):
                if "has no torch.compile" not in why:
                    problems.append("%s declines: %s" % (arm.name, why))
                continue
            problems.append("%s declines %s: %s" % (arm.name, spec.op, why))
            continue
        for exact in (True, False):
            s = _namespace(spec, compute="f64") if exact else spec
            ins, values = _inputs(s, dims, rng, exact, dev)
            outs = _outputs(s, dims, exact, dev)
            problem = types.SimpleNamespace(spec=s, inputs=ins, outputs=outs, stream=0)
            where = "%s (%s)" % (arm.name, "float64" if exact else "as specified")
            try:
                arm.prepare(problem)
                arm.run(ins, outs)
            except Exception as e:  # the generated source says where
                source = arm.artifacts()[0][2] if arm.artifacts() else ""
                problems.append("%s: %s: %s\n%s" % (where, type(e).__name__, e, source))
                continue
            if reference is not None:
                problems += _compare(s, outs, reference(values, dims), exact, where)
        source = arm.artifacts()[0][2]
        if arm.kind == "eager" and dev == "cpu":
            problems += _cuda_source_problems(spec) + _f64_cuda_problems(spec) + \
                _reductions_problems(spec)
        for line in _expected_lines(spec, arm):  # a line, or a tuple of alternatives
            if not any(alt in source for alt in (line if isinstance(line, tuple) else (line,))):
                problems.append("%s: the source lacks %r:\n%s" % (arm.name, line, source))
        if verbose:
            print("%s on %s: %s" % (arm.name, spec.op, "ok" if not problems else "PROBLEMS"))
            if arm.kind == "eager" and dev == "cpu":
                print(source)
    return problems


# ---- format 1: the expression arms beside


_FORMAT1 = {
    "residual_relu": lambda x, r: _np.where(x + r > 0, x + r, 0.0),
    "max_min_const": lambda x, r: _np.maximum(x, 0.5) + _np.minimum(r, -0.25),
}


def format1_problems(spec):
    """torch_eager_cpu on a format-1 spec against numpy (float32 inputs, float64 sums)."""
    global _np
    import numpy
    import torch
    import torch_arms

    _np = numpy
    arm = torch_arms.TorchEagerCpu()
    why = arm.supports(spec)
    if why is not None:
        return ["torch_eager_cpu declines: %s" % why]
    rng = numpy.random.default_rng(7)
    ins = [torch.tensor(rng.standard_normal(1000), dtype=torch.float32) for _ in spec.inputs]
    out = torch.empty(1000, dtype=torch.float32)
    arm.prepare(types.SimpleNamespace(spec=spec, inputs=ins, outputs=[out], stream=0))
    arm.run(ins, [out])
    want = _FORMAT1[spec.op](*[t.double().numpy() for t in ins]).astype(numpy.float32)
    if not (out.numpy() == want).all():
        return ["differs from numpy:\n%s" % arm.artifacts()[0][2]]
    return []


# ---- the layout of spec.program and kq.Tensor's integer views


def layout_problems(softmax, layer_norm, format1):
    """What differs from the layout kq_module.hpp documents, for tests/data/specs_v2's softmax
    and layer norm and a format-1 spec."""
    out = []

    def expect(what, got, want):
        if got != want:
            out.append("%s: got %r, want %r" % (what, got, want))

    p = softmax.program
    expect("format", (softmax.format, format1.format, format1.program), (2, 1, None))
    expect("dims", [(d.name, d.kind) for d in p.dims], [("M", "free"), ("N", "reduced")])
    expect("tensors", [(t.name, t.role, t.dtype, t.shape) for t in p.tensors],
           [("x", "input", "bf16", ["M", "N"]), ("y", "output", "bf16", ["M", "N"]),
            ("mx", "temporary", "f64", ["M"]), ("e", "temporary", "f64", ["M", "N"]),
            ("s", "temporary", "f64", ["M"])])
    expect("inputs, outputs", (softmax.inputs, [o.name for o in softmax.outputs]), (["x"], ["y"]))
    expect("statements", [s.text.strip() for s in p.statements],
           ["mx[m] = max(n, x[m, n])", "e[m, n] = exp(x[m, n] - mx[m])",
            "s[m] = sum(n, e[m, n])", "y[m, n] = e[m, n] / s[m]"])
    s0 = p.statements[0]
    expect("statement 0", (p.tensors[s0.tensor].name, [p.indices[i].name for i in s0.lhs],
                           s0.scan_index, s0.line), ("mx", ["m"], -1, 1))
    root = p.nodes[s0.root]
    expect("max(n, ...)", (root.kind, root.reduction, root.op, root.scan,
                           [p.indices[i].name for i in root.over]),
           ("reduce", "max", None, None, ["n"]))
    access = p.nodes[root.args[0]]
    expect("x[m, n]", (access.kind, p.tensors[access.ref].name,
                       [(p.nodes[a].kind, p.indices[p.nodes[a].ref].name) for a in access.args]),
           ("access", "x", [("index", "m"), ("index", "n")]))
    expect("index extents", [(v.name, v.extent) for v in p.indices][:2], [("m", "M"), ("n", "N")])
    ops = [n.op for n in p.nodes if n.kind == "apply"]
    expect("apply ops", ops, ["sub", "exp", "div"])
    expect("args before their node", all(a < k for k, n in enumerate(p.nodes) for a in n.args),
           True)
    q = layer_norm.program
    expect("params", [(d.name, d.value) for d in q.params], [("eps", 1e-5)])
    expect("param and dim nodes", sorted({(n.kind, n.ref) for n in q.nodes
                                          if n.kind in ("param", "dim")}),
           [("dim", 1), ("param", 0)])
    expect("numbers", [n.value for n in q.nodes if n.kind == "number"], [1.0])
    expect("layer_norm outputs", ([t.dtype for t in q.tensors if t.role == "output"],
                                  layer_norm.compute, layer_norm.dtype),
           (["bf16", "f32", "f32"], "f32", "bf16"))
    return out


def tensor_problems(i32, i64, flags):
    """kq.Tensor's i32, i64 and bool views (over [7, -2, 2^31 - 1], [2^40, -5] and [1, 0, 0, 1])
    through numpy and, where torch is installed, torch as an arm gets them; writes element 1 of
    each (5, 6, True) for the caller to see."""
    out = []
    want = [(i32, "i32", "int32", [7, -2, 2 ** 31 - 1]), (i64, "i64", "int64", [2 ** 40, -5]),
            (flags, "bool", "bool", [True, False, False, True])]
    if kq.missing("numpy") is None:
        import numpy

        for t, name, np_name, values in want:
            a = numpy.asarray(t)
            if (t.dtype, str(a.dtype), a.tolist()) != (name, np_name, values):
                out.append("numpy: %s gives %s %r" % (name, a.dtype, a.tolist()))
    if kq.torch_missing("cpu") is not None:
        for t, name, _, value in want:  # write as torch would have
            numpy.asarray(t)[1] = {"i32": 5, "i64": 6, "bool": True}[name]
        return out
    import torch

    arm = type("TorchViews", (kq.Arm,), {"name": "torch_views", "tensors": "torch"})()
    calls = kq._Calls(arm)
    for t, name, torch_name, values in want:
        x = calls.view(t)
        if (str(x.dtype), x.tolist()) != ("torch." + torch_name, values):
            out.append("torch: %s gives %s %r" % (name, x.dtype, x.tolist()))
        x[1] = {"i32": 5, "i64": 6, "bool": True}[name]
    if hasattr(torch, "from_dlpack"):
        for t, name, torch_name, _ in want[:2]:
            x = torch.from_dlpack(t)
            if str(x.dtype) != "torch." + torch_name:
                out.append("DLPack: %s gives %s" % (name, x.dtype))
    return out


# ---- a JSON dump of the specs, to run these checks elsewhere


def _plain(x):
    if isinstance(x, types.SimpleNamespace):
        return {k: _plain(v) for k, v in vars(x).items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def dump(specs, path):
    with open(path, "w") as f:
        json.dump([_plain(s) for s in specs], f)


def _load(path):
    with open(path) as f:
        return json.load(f, object_hook=lambda d: types.SimpleNamespace(**d))


def main(argv):
    """SPECS.json [--device cuda] [--arms a,b] [--shard K/N]: the checks of each spec in the dump
    (the Kth of every N, from 0), by each arm (default: all the device's torch arms)."""
    def option(name, default=None):
        return argv[argv.index(name) + 1] if name in argv else default

    device = option("--device", "cpu")
    arms = option("--arms")
    k, n = (int(v) for v in option("--shard", "0/1").split("/"))
    specs = _load(argv[1])[k::n]
    failed = 0
    for s in specs:
        found = check(s, device, arms=arms.split(",") if arms else None)
        for p in found:
            print("FAIL %s: %s" % (s.op, p))
        failed += bool(found)
    print("%d passed, %d failed" % (len(specs) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
