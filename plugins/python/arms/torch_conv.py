"""PyTorch's own convolution, the vendor path of a format-2 convolution spec:

  torch_conv       F.conv1d, conv2d or conv3d on CUDA (cuDNN, as a user's nn.Conv2d gets it);
  torch_conv_cpu   the same on the CPU.

It is what KernelBench's convolution problems call; torch_eager and torch_compile run the spec's
statements instead (a sum over windows: an unfold view and an einsum), so this arm is the one
that says whether a candidate beats the library. It recognises a convolution by the structure of
the statements, never by the op's name: one statement

    y[b, o, s1, ..., sN] = sum((c, k1, ..., kN), x[b, c, S1 * s1 + D1 * k1 - P1, ...] * w[o, c, k1, ..., kN])

(either operand first, N = 1, 2 or 3), or its depthwise form (groups = channels: y[b, c, ...] =
sum((k1, ...), x[b, c, ...] * w[c, 0, k1, ...]) with w of [C, 1, K1, ...]), or a transposed
convolution (F.conv_transpose: y[b, o, t...] = sum((c, k...), x[b, c, (t + P - D * k) / S, ...]
* w[c, o, k...]), its taps running down x, the division a position only where exact; at stride
1 written x[b, c, t + P - D * k, ...]; grouped, its channels written (groups, channels in a
group): y[b, g, o, t...] = sum((c, k...), x[b, g, c, ...] * w[g, c, o, k...])), optionally plus
a bias b[o] (not on a grouped one: F.conv's bias runs over every group's channels). The strides S, dilations D
and paddings P are read from the subscripts (constants, S and D at least 1); where a window
starts before x (P > 0), x must be declared `pad: 0`, as F.conv pads. The spec's output length
need not be PyTorch's: where the spec's is shorter, the leading part of F.conv's result is
written; where its windows reach further past the end of x than P, x is padded with zeros
behind first (x declared `pad: 0`: a read there gives 0). x, w, the bias and y must share one
float dtype.

F.conv has no out=: its result is copied into kq's output, one more pass over y.

On CUDA, cuDNN's f32 convolutions run in IEEE f32 unless the spec admits TF32 (compute: tf32):
PyTorch lets them use TF32 by default, which an f32 contract does not admit (KernelBench 66 on
the H100: errors of 7e-4 relative, the arm rejected by values). The setting is the call's
alone, put back after: every arm of a worker shares the interpreter.
"""
import _torch_flags
import kq

_FLOATS = ("f32", "f16", "bf16")


class ConvPrecision(_torch_flags.Settings):
    """cuDNN's f32 convolution precision for the calls inside `with`: TF32 where tf32, else
    IEEE; what it was, put back after. PyTorch 2.9 on says it through
    torch.backends.cudnn.conv.fp32_precision ("tf32", "ieee"), set with its rnn twin: PyTorch
    refuses to read cuDNN's one TF32 flag while the two differ. Earlier ones say it through
    torch.backends.cudnn.allow_tf32."""

    def __init__(self, tf32):
        import torch

        cudnn = torch.backends.cudnn
        Flag = _torch_flags.Flag
        conv, rnn = getattr(cudnn, "conv", None), getattr(cudnn, "rnn", None)
        if hasattr(conv, "fp32_precision"):
            owners = [conv] + ([rnn] if hasattr(rnn, "fp32_precision") else [])
            wanted = [(Flag.attribute(o, "fp32_precision"), "tf32" if tf32 else "ieee")
                      for o in owners]
        else:
            wanted = [(Flag.attribute(cudnn, "allow_tf32"), bool(tf32))]
        super().__init__(wanted)
        self._convolutions = wanted[0][0]

    def now(self):
        """The convolutions' setting."""
        return self._convolutions.read()


def _poly(p, i):
    """Node i as {index variable or None: int coefficient}, or None where it is not a sum of
    integer multiples of index variables and an integer."""
    n = p.nodes[i]
    if n.kind == "index":
        return {n.ref: 1}
    if n.kind == "number":
        return {None: int(n.value)} if n.value == int(n.value) else None
    if n.kind != "apply" or n.op not in ("add", "sub", "mul", "neg"):
        return None
    parts = [_poly(p, a) for a in n.args]
    if any(q is None for q in parts):
        return None
    if n.op == "neg":
        return {k: -c for k, c in parts[0].items()}
    if n.op == "mul":
        a, b = parts
        if set(a) == {None}:
            a, b = b, a
        if set(b) != {None}:
            return None  # a product of two indices
        return {k: c * b[None] for k, c in a.items()}
    out = dict(parts[0])
    for k, c in parts[1].items():
        out[k] = out.get(k, 0) + (c if n.op == "add" else -c)
    return out


def _index(p, i):
    """The index variable node i is, or None."""
    n = p.nodes[i]
    return n.ref if n.kind == "index" else None


class Conv:
    """What a recognised convolution is: the tensors by position in spec.program.tensors, the
    strides, dilations and paddings (PyTorch's: a transposed convolution's P is what its output
    loses at each end), whether it is depthwise (one group a channel), transposed, or grouped
    (its channels written (groups, channels in a group))."""

    def __init__(self, x, w, bias, y, stride, dilation, padding, depthwise, transposed=False,
                 grouped=False):
        self.x, self.w, self.bias, self.y = x, w, bias, y
        self.stride, self.dilation, self.padding = stride, dilation, padding
        self.depthwise, self.transposed, self.grouped = depthwise, transposed, grouped


def recognise(spec):
    """The Conv a spec's statements compute, or the reason they are not one."""
    p = getattr(spec, "program", None)
    no = "computes a convolution only (one statement y[b, o, ...] = sum((c, k...), x * w))"
    if p is None or len(p.statements) != 1:
        return no
    st = p.statements[0]
    root = p.nodes[st.root]
    bias = None
    if root.kind == "apply" and root.op == "add":
        kinds = [p.nodes[a].kind for a in root.args]
        if sorted(kinds) != ["access", "reduce"]:
            return no
        bias = p.nodes[root.args[kinds.index("access")]]
        root = p.nodes[root.args[kinds.index("reduce")]]
    if root.kind != "reduce" or root.reduction != "sum":
        return no
    body = p.nodes[root.args[0]]
    if body.kind != "apply" or body.op != "mul" or \
            any(p.nodes[a].kind != "access" for a in body.args):
        return no
    lhs = list(st.lhs)
    a, b = (p.nodes[i] for i in body.args)
    # x is the operand read through windows: its spatial subscripts are not bare indices.
    if all(_index(p, i) is not None for i in a.args):
        a, b = b, a
    x, w = a, b
    xa, wa = list(x.args), list(w.args)
    # Grouped, the channels written (groups, channels in a group): y[b, g, o, t...] =
    # sum((c, k...), x[b, g, c, ...] * w[g, c, o, k...]). Without g it is the form below.
    grouped = len(lhs) >= 4 and len(xa) == len(lhs) == len(wa) and \
        _index(p, xa[1]) == lhs[1] == _index(p, wa[0]) and _index(p, wa[2]) == lhs[2] and \
        _index(p, wa[1]) in set(root.over)
    if grouped:
        lhs, xa, wa = [lhs[0]] + lhs[2:], [xa[0]] + xa[2:], wa[1:]
    n = len(lhs) - 2
    if n not in (1, 2, 3):
        return no + "; 1, 2 or 3 spatial dims"
    if len(xa) != n + 2 or len(wa) != n + 2:
        return no
    depthwise = _index(p, wa[1]) is None
    over = set(root.over)
    if _index(p, xa[0]) != lhs[0]:
        return no
    if depthwise:
        wt = p.tensors[w.ref]
        c = lhs[1]
        if _index(p, xa[1]) != c or _index(p, wa[0]) != c or \
                p.nodes[wa[1]].kind != "number" or p.nodes[wa[1]].value != 0 or \
                wt.shape[1] != 1:
            return no + " (depthwise: w[c, 0, k...] of [C, 1, K...])"
    else:
        c = _index(p, xa[1])
        # w[o, c, k...] for a convolution, w[c, o, k...] for a transposed one.
        places = [_index(p, wa[0]), _index(p, wa[1])]
        if c is None or c not in over or sorted(places) != sorted([c, lhs[1]]):
            return no
    transposed = not depthwise and _index(p, wa[0]) == c
    if grouped and not transposed:
        return no + " (grouped: transposed only, w[g, c, o, k...])"
    taps = [_index(p, wa[2 + d]) for d in range(n)]
    if any(k is None or k not in over for k in taps) or \
            over != set(taps) | (set() if depthwise else {c}):
        return no
    stride, dilation, padding = [], [], []
    for d in range(n):
        sub, by = xa[2 + d], 1
        sn = p.nodes[sub]
        if transposed and sn.kind == "apply" and sn.op == "div":  # (t + P - D * k) / S
            sub, by = sn.args[0], int(p.nodes[sn.args[1]].value)
        poly = _poly(p, sub)
        s, k = lhs[2 + d], taps[d]
        if poly is None or set(poly) - {s, k, None}:
            return no
        # A transposed convolution reads x[(t + P - D * k) / S]: its taps run down x.
        sign = -1 if transposed else 1
        if poly.get(s, 0) < 1 or sign * poly.get(k, 0) < 1 or sign * poly.get(None, 0) > 0 or \
                (transposed and poly[s] != 1):
            return no + (" (transposed: x's spatial subscripts (t + P - D * k) / S, D at least 1)"
                         if transposed else
                         " (x's spatial subscripts S * s + D * k - P, S and D at least 1)")
        stride.append(by if transposed else poly[s])
        dilation.append(sign * poly[k])
        padding.append(-sign * poly.get(None, 0))
    pad = p.tensors[x.ref].pad
    if pad is not None and pad != 0:
        return "x padded with %g: F.conv pads with 0 only" % pad
    if any(padding) and pad is None:
        return no  # the spec's own points refuse such reads: never reached
    if bias is not None:
        if len(bias.args) != 1 or _index(p, bias.args[0]) != lhs[1] or \
                p.tensors[bias.ref].role != "input":
            return no + " (a bias b[o])"
        if grouped:  # F.conv's bias runs over every group's channels, not one group's
            return no + " (a grouped convolution without a bias)"
    roles = [p.tensors[t.ref].role for t in (x, w)]
    if roles != ["input", "input"] or p.tensors[st.tensor].role != "output":
        return no
    return Conv(x.ref, w.ref, None if bias is None else bias.ref, st.tensor, tuple(stride),
                tuple(dilation), tuple(padding), depthwise, transposed, grouped)


class _TorchConv(kq.Arm):
    family = "torch"
    tensors = "torch"
    version = "1"

    def supports(self, spec):
        conv = recognise(spec)
        if isinstance(conv, str):
            return conv
        p = spec.program
        used = [conv.x, conv.w, conv.y] + ([conv.bias] if conv.bias is not None else [])
        if len(used) != len([t for t in p.tensors if t.role != "temporary"]):
            return "computes a convolution of x, w (and a bias) into y only"
        dtypes = {p.tensors[t].dtype for t in used}
        if len(dtypes) != 1 or not dtypes <= set(_FLOATS):
            return ("x, w, the bias and y of one float dtype (f32, f16 or bf16) only, as F.conv "
                    "takes them; the spec's are %s" % ", ".join(sorted(dtypes)))
        return kq.torch_missing(self.device)

    def prepare(self, problem):
        import torch
        import torch.nn.functional as F

        conv = self._conv = recognise(problem.spec)
        self._precision = ConvPrecision(getattr(problem.spec, "tf32", False)) \
            if self.device == "cuda" else None
        p = problem.spec.program
        order = [k for k, t in enumerate(p.tensors) if t.role == "input"]
        self._at = {t: order.index(t) for t in (conv.x, conv.w, conv.bias) if t is not None}
        x, w, y = self._flat(problem.inputs, problem.outputs)
        n = len(conv.stride)
        if conv.transposed:
            self._fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        else:
            self._fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
        # How far the spec's output reaches past PyTorch's: zeros padded behind x first (F.pad's
        # list runs from the last dim). A convolution's last window past x's end and its
        # padding; a transposed one's output S longer for each zero behind x.
        behind = []
        for d in range(n):
            span = conv.dilation[d] * (w.shape[2 + d] - 1)
            if conv.transposed:
                if conv.padding[d] > span:
                    raise ValueError("a transposed convolution whose output starts %d past its "
                                     "first tap's reach (%d): F.conv_transpose cannot"
                                     % (conv.padding[d], span))
                ours = (x.shape[2 + d] - 1) * conv.stride[d] - 2 * conv.padding[d] + span + 1
                by = conv.stride[d]  # each zero behind x makes the output S longer
                behind.append(max(0, (y.shape[2 + d] - ours + by - 1) // by))
                continue
            last = conv.stride[d] * (y.shape[2 + d] - 1) + span
            behind.append(max(0, last - conv.padding[d] - (x.shape[2 + d] - 1) - conv.padding[d]))
        self._behind = [v for d in reversed(range(n)) for v in (0, behind[d])] if any(behind) \
            else None
        self._groups = x.shape[1] if conv.depthwise else 1
        if conv.grouped:
            self._groups = problem.inputs[self._at[conv.x]].shape[1]
        self._slice = tuple(slice(0, s) for s in y.shape)
        # The first call picks cuDNN's algorithm: on scratch tensors of the problem's shapes,
        # never the caller's buffers.
        scratch = kq.scratch_like(list(problem.inputs) + [problem.outputs[0]])
        for t in scratch[:-1]:
            t.fill_(0.5)
        self.run(scratch[:-1], scratch[-1:])
        if self.device == "cuda":
            torch.cuda.synchronize(y.device)

    def _flat(self, inputs, outputs):
        """x, w and y as F.conv takes them: a grouped spec's (groups, channels in a group) as one
        dim of channels (views: the buffers are contiguous)."""
        conv = self._conv
        x, w, y = inputs[self._at[conv.x]], inputs[self._at[conv.w]], outputs[0]
        if conv.grouped:
            x, w, y = x.flatten(1, 2), w.flatten(0, 1), y.flatten(1, 2)
        return x, w, y

    def run(self, inputs, outputs):
        import torch.nn.functional as F

        conv = self._conv
        x, w, y = self._flat(inputs, outputs)
        if self._behind:
            x = F.pad(x, self._behind)
        bias = inputs[self._at[conv.bias]] if conv.bias is not None else None
        if self._precision is None:
            z = self._fn(x, w, bias, stride=conv.stride, padding=conv.padding,
                         dilation=conv.dilation, groups=self._groups)
        else:
            with self._precision:
                z = self._fn(x, w, bias, stride=conv.stride, padding=conv.padding,
                             dilation=conv.dilation, groups=self._groups)
        y.copy_(z if z.shape == y.shape else z[self._slice])


class TorchConv(_TorchConv):
    name, device = "torch_conv", "cuda"


class TorchConvCpu(_TorchConv):
    name, device = "torch_conv_cpu", "cpu"
