"""triton_matmul: a hand-written Triton matrix product with its epilogue, for every format-2 spec
whose statements are one (spec.program.matmul, kq/matmul_form.hpp: batched, either operand
transposed, flattened m dims, + bias[n], gelu of the erf form). Recognised by that structure
alone, never by the op's name.

A and B of one type (f16, bf16 or f32), C and the bias of that type, computed in f32: tl.dot
accumulates in f32, with input_precision="ieee" for f32 operands (no TF32, which the f32
contracts do not admit; under compute: tf32 tl.dot's default, TF32). The bias and gelu are applied to the f32 accumulator and C is rounded
once. Offsets are 64-bit; the M, N and K tails are masked.

Tiles: where the problem is small (under 2^27 multiply-adds: every qualification case) one
config (128 x 128 x 32, or 16 x 64 x 128 for decode); otherwise prepare() times each of CONFIGS on scratch tensors of the problem's
shape (never the caller's buffers) with CUDA events, keeps the fastest, and records every
config's median as an artifact (autotune.md). Decode shapes (M <= 16) take tiles of 16 rows.
"""
import kq

_FLOATS = ("f16", "bf16", "f32")

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
CONFIGS = [
    (128, 256, 64, 8, 8, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 32, 8, 4, 4),
    (64, 256, 32, 8, 4, 4),
    (128, 64, 64, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
]
DECODE_CONFIGS = [
    (16, 64, 128, 1, 4, 4),
    (16, 128, 128, 1, 4, 3),
    (16, 32, 256, 1, 4, 3),
    (16, 256, 64, 1, 8, 3),
]
SMALL_WORK = 1 << 27

_jit = {}


def _kernel():
    if _jit:
        return _jit["mm"]
    import triton
    import triton.language as tl

    @triton.jit
    def mm(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
           s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
           HAS_BIAS: tl.constexpr, GELU: tl.constexpr, IEEE: tl.constexpr,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        g = tl.program_id(1).to(tl.int64)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        # Grouped order: GROUP_M row tiles share their column tiles in L2.
        width = GROUP_M * tiles_n
        group = pid // width
        first_m = group * GROUP_M
        size_m = min(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (pid % width) % size_m
        pid_n = (pid % width) // size_m
        rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
        rk = tl.arange(0, BLOCK_K).to(tl.int64)
        a = a_ptr + g * s_ab + rm[:, None] * s_am + rk[None, :] * s_ak
        b = b_ptr + g * s_bb + rk[:, None] * s_bk + rn[None, :] * s_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            left = K - k * BLOCK_K
            x = tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
            y = tl.load(b, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
            if IEEE:
                acc = tl.dot(x, y, acc, input_precision="ieee")
            else:
                acc = tl.dot(x, y, acc)
            a += BLOCK_K * s_ak
            b += BLOCK_K * s_bk
        if HAS_BIAS:
            acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        if GELU:
            acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
        c = c_ptr + g * s_cb + rm[:, None] * s_cm + rn[None, :] * s_cn
        tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))

    _jit["mm"] = mm
    return mm


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


class TritonMatmul(kq.Arm):
    name = "triton_matmul"
    family = "triton"
    device = "cuda"
    version = "1"
    tensors = "torch"

    def supports(self, spec):
        f = getattr(spec.program, "matmul", None) if spec.program is not None else None
        if f is None:
            return "computes a matrix product only (C = epilogue(sum(k, A B)), kq/matmul_form.hpp)"
        ins = [t for t in spec.program.tensors if t.role == "input"]
        out = [t for t in spec.program.tensors if t.role == "output"][0]
        t = ins[f.a].dtype
        if t not in _FLOATS or ins[f.b].dtype != t or out.dtype != t:
            return "A, B and C of one type (f16, bf16 or f32)"
        if f.bias is not None and ins[f.bias].dtype != t:
            return "a bias of C's type"
        if spec.compute != "f32":
            return "computes in float32 only, and the spec's compute type is %s" % spec.compute
        return kq.missing("triton") or kq.torch_missing("cuda")

    def prepare(self, problem):
        self._f = problem.spec.program.matmul
        self._tf32 = bool(getattr(problem.spec, "tf32", False))  # compute: tf32 admits it
        self._chosen = getattr(self, "_chosen", {})
        self._tables = getattr(self, "_tables", {})
        self._compiled = getattr(self, "_compiled", {})
        args = self._views(problem.inputs, problem.outputs)
        key = self._key(args)
        if key not in self._chosen:
            self._chosen[key] = self._choose(args)
        # Compiles here, on scratch tensors of the problem's shape, dtypes and strides.
        self._launch(self._scratch(args), self._chosen[key], keep=True)

    def run(self, inputs, outputs):
        args = self._views(inputs, outputs)
        if args["M"] * args["N"] * args["batch"] == 0:
            return
        self._launch(args, self._chosen[self._key(args)])

    # ---- the problem as 3-d views: (batch, M, K), (batch, K, N), (batch, M, N)

    def _views(self, inputs, outputs):
        f = self._f
        a, b, c = inputs[f.a], inputs[f.b], outputs[0]
        nb = f.batch
        batch = _prod(c.shape[:nb])
        M = _prod(c.shape[nb:nb + f.m_dims])
        N = _prod(c.shape[nb + f.m_dims:])
        K = a.shape[nb] if f.a_transposed else a.shape[-1]
        for t in (a, b, c):
            if not t.is_contiguous():
                raise kq.Unsupported("contiguous operands only (the m and n dims are flattened)")
        a3 = a.reshape(batch, K, M).transpose(1, 2) if f.a_transposed else a.reshape(batch, M, K)
        b3 = b.reshape(batch, N, K).transpose(1, 2) if f.b_transposed else b.reshape(batch, K, N)
        c3 = c.reshape(batch, M, N)
        bias = inputs[f.bias].reshape(N) if f.bias is not None else None
        return {"a": a3, "b": b3, "c": c3, "bias": bias, "batch": batch, "M": M, "N": N, "K": K}

    def _key(self, x):
        return (x["batch"], x["M"], x["N"], x["K"], x["a"].stride(), x["b"].stride(),
                x["a"].dtype)

    def _scratch(self, x):
        import torch

        def like(t):
            if t is None:
                return None
            s = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
            return s.normal_() if s.is_floating_point() else s

        return dict(x, a=like(x["a"]), b=like(x["b"]), c=like(x["c"]), bias=like(x["bias"]))

    # ---- tiles

    def _choose(self, x):
        decode = x["M"] <= 16
        configs = DECODE_CONFIGS if decode else CONFIGS
        if x["batch"] * x["M"] * x["N"] * x["K"] < SMALL_WORK:
            # Within the shared memory at f32 too: (128 + 128) x 32 x 4 bytes x 3 stages.
            return DECODE_CONFIGS[0] if decode else (128, 128, 32, 8, 4, 3)
        import torch

        s = self._scratch(x)
        times = []
        for cfg in configs:
            try:
                self._launch(s, cfg)
                torch.cuda.current_stream().synchronize()
            except Exception as e:  # a config the shape cannot take (shared memory)
                times.append((cfg, None, str(e).splitlines()[0] if str(e) else type(e).__name__))
                continue
            ms = []
            for _ in range(10):
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                self._launch(s, cfg)
                e1.record()
                e1.synchronize()
                ms.append(e0.elapsed_time(e1))
            times.append((cfg, sorted(ms)[len(ms) // 2], ""))
        ok = [t for t in times if t[1] is not None]
        if not ok:
            raise kq.Unsupported("no tile config compiled for this shape: %s" % times[0][2])
        best = min(ok, key=lambda t: t[1])
        self._tables[self._key(x)] = times
        return best[0]

    def _launch(self, x, cfg, keep=False):
        import torch
        import triton

        bm, bn, bk, gm, warps, stages = cfg
        a, b, c, bias = x["a"], x["b"], x["c"], x["bias"]
        M, N, K = x["M"], x["N"], x["K"]
        if M * N * x["batch"] == 0:
            return
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), x["batch"])
        k = _kernel()[grid](
            a, b, bias if bias is not None else c, c, M, N, K,
            a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1), b.stride(2),
            c.stride(0), c.stride(1), c.stride(2),
            HAS_BIAS=bias is not None, GELU=bool(self._f.gelu), IEEE=a.dtype == torch.float32 and not self._tf32,
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages)
        if keep and k is not None and len(self._compiled) < 8:
            self._compiled.setdefault((cfg, a.dtype, self._f.gelu, bias is not None), k)

    def artifacts(self):
        out = []
        for n, ((cfg, dtype, gelu, has_bias), k) in enumerate(getattr(self, "_compiled", {}).items()):
            out += kq.triton_artifacts(_kernel(), k, "mm_%d" % n)
        lines = ["# triton_matmul's tile choices", "",
                 "Problems of 2^27 multiply-adds or more: each config timed on scratch tensors "
                 "(10 launches, CUDA events, the median); the fastest kept.", "",
                 "| batch, M, N, K | BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages | median ms | |",
                 "|---|---|---:|---|"]
        for key, times in getattr(self, "_tables", {}).items():
            best = min((t for t in times if t[1] is not None), key=lambda t: t[1])
            for cfg, ms, err in times:
                lines.append("| %s | %s | %s | %s |" % (
                    ", ".join(str(v) for v in key[:4]), ", ".join(str(v) for v in cfg),
                    "%.4f" % ms if ms is not None else "-",
                    "chosen" if cfg == best[0] else err))
        for key, cfg in getattr(self, "_chosen", {}).items():
            if key not in getattr(self, "_tables", {}):
                lines.append("| %s | %s | - | by shape |" % (
                    ", ".join(str(v) for v in key[:4]), ", ".join(str(v) for v in cfg)))
        out.append(("notes", "autotune.md", "\n".join(lines) + "\n"))
        return out
