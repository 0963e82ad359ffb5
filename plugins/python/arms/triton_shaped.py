"""Hand-written Triton arms of format-2 (shaped) specs, row-wise over the last dim of an (M, N)
matrix: triton_softmax, triton_log_softmax, triton_layer_norm (y, mean, rstd) and
triton_rms_norm. The kernels are in _triton_shaped_kernels.py.

Each arm recognises its computation only by the structure of the spec's statements:
kq.computes(spec, CANONICAL), CANONICAL being what `kq check-spec SPEC` prints under
"canonical form" (names by place). Never by the op's name or the file's. It then checks the
tensors' dtypes (f32, f16 and bf16 loaded, computed in f32, each output rounded once to its own
dtype), the compute type (f32), the domain (finite: the max reductions are not NaN-propagating)
and the layouts (contiguous rows); eps is the spec's first param, by position.

One program per row. Where N fits a block (N <= 16384) the whole row sits in registers: BLOCK is
the next power of two of N (at least 64), num_warps grows with BLOCK (4 up to 1024, 8 from 2048
to 8192, 16 at 16384). Longer rows (the 50257 vocabulary, KernelBench's 393216) take the looped kernels:
chunks of 4096 with 8 warps, one pass for the row's statistics (online max and sum for the
softmaxes), one pass to write y, the second walking the chunks backwards for L2 reuse.

Kernels launch on torch's current stream, which during prepare() and run() is kq's (as in
triton_arms.py). prepare() compiles on scratch tensors of the problem's N, dtypes and strides
(a few rows), never the caller's buffers; run() launches only. Each compiled variant's source,
ttir, ttgir, llir, ptx, cubin and resources are the arm's artifacts (kq.triton_artifacts).
"""
import _canonical_forms
import kq
from _triton_shaped_kernels import kernels

_FLOATS = ("f32", "f16", "bf16")

ROW_MAX = 16384  # the largest BLOCK of the one-block kernels
LOOP_BLOCK = 4096  # the chunk of the looped kernels
LOOP_WARPS = 8


def _next_pow2(n):
    return 1 << max(0, (n - 1).bit_length())


def _row_warps(block):
    # bf16 softmax at 32768 x 4096 on the H200 (tools/bench_triton_rows.py): 8 warps 133 us
    # (97% of the copy), 4 warps 134 us, 16 warps 166 us.
    if block <= 1024:
        return 4
    if block <= 8192:
        return 8
    return 16


class _ShapedTritonArm(kq.Arm):
    """A row-wise Triton kernel over an (M, N) input in0 and the per-row or (M, N) outputs.
    Subclasses give the canonical form they compute, the kernel's name and its arguments."""

    family = "triton"
    device = "cuda"
    version = "1"
    tensors = "torch"
    canonical = None  # what `kq check-spec` prints under "canonical form"
    kernel = None  # the prefix of a kernels() key: KERNEL_row, KERNEL_loop
    what = None  # the computation, in words, for the reasons
    uses_eps = False

    def supports(self, spec):
        if not kq.computes(spec, self.canonical):
            return "computes %s only (format-2 statements of that canonical form)" % self.what
        program = spec.program
        for t in program.tensors:
            if t.role in ("input", "output") and t.dtype not in _FLOATS:
                return "%s %s is %s: the kernel loads and stores f32, f16 and bf16 only" % (
                    t.role, t.name, t.dtype)
        if spec.compute != "f32":
            return "computes in float32 only, and the spec's compute type is %s" % spec.compute
        if spec.domain != "finite":
            return "finite inputs only: the kernel's max and sums do not propagate NaN as kq does"
        if not spec.layouts.contiguous_only:
            return "contiguous rows only, and the spec admits strided views"
        if self.uses_eps and len(program.params) < 1:
            return "needs eps, the spec's first param"
        return kq.missing("triton") or kq.torch_missing("cuda")

    def prepare(self, problem):
        self._variants = getattr(self, "_variants", {})
        x = problem.inputs[0]
        if x.dim() != 2:
            raise kq.Unsupported("an (M, N) input, and x has %d dims" % x.dim())
        for t in list(problem.inputs) + list(problem.outputs):
            if t.shape[-1] > 1 and t.stride(-1) != 1:
                raise kq.Unsupported("rows of unit stride only, and a tensor has strides %s"
                                     % (tuple(t.stride()),))
        m, n = x.shape
        self._empty = m == 0 or n == 0
        if self._empty:
            if n == 0 and any(t.numel() for t in problem.outputs):
                raise kq.Unsupported("rows of length 0")
            return
        self._eps = float(problem.spec.program.params[0].value) if self.uses_eps else None
        if n <= ROW_MAX:
            self._name = self.kernel + "_row"
            self._block = max(64, _next_pow2(n))
            self._warps = _row_warps(self._block)
        else:
            self._name = self.kernel + "_loop"
            self._block = LOOP_BLOCK
            self._warps = LOOP_WARPS
        self._fn = kernels()[self._name]
        # Compiles here, on scratch tensors with the problem's N, dtypes and strides, a row or
        # two of them: prepare must not write the caller's buffers (an output may alias an
        # input). x and the outputs have a row each ([M, N] or [M]); w and b are [N].
        import torch

        rows = min(m, 2)

        def scratch(t, per_row):
            shape = ((rows,) + tuple(t.shape[1:])) if per_row else tuple(t.shape)
            return torch.empty_strided(shape, t.stride(), dtype=t.dtype, device=t.device)

        ins = [scratch(x, True)] + [scratch(t, False) for t in problem.inputs[1:]]
        outs = [scratch(t, True) for t in problem.outputs]
        self._launch(ins, outs, rows)

    def _launch(self, inputs, outputs, m):
        k = self._fn[(m,)](*self._args(inputs, outputs), BLOCK=self._block,
                           num_warps=self._warps)
        key = (self._name, getattr(getattr(k, "metadata", None), "hash", None))
        if k is not None and key not in self._variants and len(self._variants) < 8:
            self._variants[key] = (self._fn, k)

    def run(self, inputs, outputs):
        if self._empty:
            return
        x = inputs[0]
        self._launch(inputs, outputs, x.shape[0])

    def artifacts(self):
        out = []
        for k, ((name, _), (fn, kernel)) in enumerate(getattr(self, "_variants", {}).items()):
            out += kq.triton_artifacts(fn, kernel, "%s_%d" % (name, k))
        return out


class TritonSoftmax(_ShapedTritonArm):
    name = "triton_softmax"
    kernel = "softmax"
    what = "softmax over the last dim"
    canonical = _canonical_forms.SOFTMAX

    def _args(self, inputs, outputs):
        x, y = inputs[0], outputs[0]
        return (x, y, x.shape[1], x.stride(0), y.stride(0))


class TritonLogSoftmax(_ShapedTritonArm):
    name = "triton_log_softmax"
    kernel = "log_softmax"
    what = "log-softmax over the last dim"
    canonical = _canonical_forms.LOG_SOFTMAX

    def _args(self, inputs, outputs):
        x, y = inputs[0], outputs[0]
        return (x, y, x.shape[1], x.stride(0), y.stride(0))


class TritonLayerNorm(_ShapedTritonArm):
    name = "triton_layer_norm"
    kernel = "layer_norm"
    what = "layer norm over the last dim (y, mean, rstd; weight and bias)"
    uses_eps = True
    canonical = """
    out1[i0] = div(sum(i1, in0[i0, i1]), d1)
    tmp0[i0] = div(sum(i1, mul(sub(in0[i0, i1], out1[i0]), sub(in0[i0, i1], out1[i0]))), d1)
    out2[i0] = div(1, sqrt(add(tmp0[i0], p0)))
    out0[i0, i1] = add(mul(mul(sub(in0[i0, i1], out1[i0]), out2[i0]), in1[i1]), in2[i1])
    shapes: in0[d0, d1] in1[d1] in2[d1] out0[d0, d1] out1[d0] out2[d0] tmp0[d0]
    """

    def _args(self, inputs, outputs):
        x, w, b = inputs
        y, mean, rstd = outputs
        return (x, w, b, y, mean, rstd, x.shape[1], x.stride(0), y.stride(0), self._eps)


class TritonRmsNorm(_ShapedTritonArm):
    name = "triton_rms_norm"
    kernel = "rms_norm"
    what = "RMS norm over the last dim, x * rsqrt(mean(x^2) + eps) * w"
    uses_eps = True
    canonical = """
    tmp0[i0] = div(1, sqrt(add(div(sum(i1, mul(in0[i0, i1], in0[i0, i1])), d1), p0)))
    out0[i0, i1] = mul(mul(in0[i0, i1], tmp0[i0]), in1[i1])
    shapes: in0[d0, d1] in1[d1] out0[d0, d1] tmp0[d0]
    """

    def _args(self, inputs, outputs):
        x, w = inputs
        y = outputs[0]
        return (x, w, y, x.shape[1], x.stride(0), y.stride(0), self._eps)
