"""PyTorch's own attention, the vendor path of a format-2 attention spec:

  torch_sdpa       F.scaled_dot_product_attention(q, k, v) on CUDA, torch's dispatch choosing
                   the kernel (flash, memory-efficient, cuDNN or math) as a user's call gets it;
  torch_sdpa_cpu   the same on the CPU.

It is what KernelBench's problem 97 calls; torch_eager and torch_compile run the spec's
statements instead (scores, max, exp, sum, weighted values), so this arm is the one that says
whether a candidate beats the library. It recognises the computation only by the statements'
canonical form (softmax(q k^T / sqrt(E)) v over [B, H, L, E] q, [B, H, S, E] k, [B, H, S, Ev] v,
no mask, no dropout, the default scale), never by the op's name; q, k, v and y must share one
float dtype, as the function requires. Whether a backend's precision meets the spec's compare
rule (TF32 products, a half P) is qualification's to say, not this arm's to assume.

F.scaled_dot_product_attention has no out=: the result is copied into kq's output, one more
pass over y (small beside the products at any shape attention is timed at). The backend torch
chose for each problem's shapes (the first 64), read through torch._fused_sdp_choice where this
torch has it, is the arm's artifact.
"""
import kq

_FLOATS = ("f32", "f16", "bf16")

CANONICAL = """
tmp0[i0, i1, i2, i3] = div(sum(i4, mul(in0[i0, i1, i2, i4], in1[i0, i1, i3, i4])), sqrt(d3))
tmp1[i0, i1, i2] = max(i3, tmp0[i0, i1, i2, i3])
tmp2[i0, i1, i2, i3] = exp(sub(tmp0[i0, i1, i2, i3], tmp1[i0, i1, i2]))
tmp3[i0, i1, i2] = sum(i3, tmp2[i0, i1, i2, i3])
out0[i0, i1, i2, i3] = div(sum(i4, mul(tmp2[i0, i1, i2, i4], in2[i0, i1, i4, i3])), tmp3[i0, i1, i2])
shapes: in0[d0, d1, d2, d3] in1[d0, d1, d4, d3] in2[d0, d1, d4, d5] out0[d0, d1, d2, d5]
        tmp0[d0, d1, d2, d4] tmp1[d0, d1, d2] tmp2[d0, d1, d2, d4] tmp3[d0, d1, d2]
"""


def _sdpa_missing():
    import torch
    import torch.nn.functional as F

    if not hasattr(F, "scaled_dot_product_attention"):
        return "PyTorch %s has no F.scaled_dot_product_attention (2.0 or later)" % (
            torch.__version__)
    return None


class _TorchSdpa(kq.Arm):
    family = "torch"
    tensors = "torch"
    version = "1"

    def supports(self, spec):
        if not kq.computes(spec, CANONICAL):
            return ("computes softmax(q k^T / sqrt(E)) v per batch and head only (format-2 "
                    "statements of that canonical form)")
        dtypes = {t.dtype for t in spec.program.tensors if t.role in ("input", "output")}
        if len(dtypes) != 1 or not dtypes <= set(_FLOATS):
            return ("q, k, v and y of one float dtype (f32, f16 or bf16) only, as "
                    "F.scaled_dot_product_attention takes them; the spec's are %s"
                    % ", ".join(sorted(dtypes)))
        return kq.torch_missing(self.device) or _sdpa_missing()

    def prepare(self, problem):
        import torch
        import torch.nn.functional as F

        self._sdpa = F.scaled_dot_product_attention
        q, k, v = problem.inputs
        self._backends = getattr(self, "_backends", {})
        shapes = " ".join("x".join(map(str, t.shape)) for t in (q, k, v))
        if shapes not in self._backends and len(self._backends) < 64:
            self._backends[shapes] = self._choice(q, k, v)
        # The first call loads and selects its kernels: on scratch tensors of the problem's
        # shapes and strides, never the caller's buffers (prepare writes nothing of theirs).
        sq, sk, sv, sy = kq.scratch_like([q, k, v, problem.outputs[0]])
        for t in (sq, sk, sv):
            t.fill_(0.5)
        sy.copy_(self._sdpa(sq, sk, sv))
        if self.device == "cuda":
            torch.cuda.synchronize(q.device)

    def _choice(self, q, k, v):
        import torch

        choose = getattr(torch, "_fused_sdp_choice", None)
        if choose is None:
            return "not known (this torch has no torch._fused_sdp_choice)"
        try:
            backend = choose(q, k, v)
        except Exception as e:  # a query about the dispatch, never the arm's result
            return "not known (torch._fused_sdp_choice: %s)" % str(e).splitlines()[0]
        names = getattr(getattr(torch.nn, "attention", None), "SDPBackend", None)
        try:
            return names(backend).name if names is not None else str(backend)
        except ValueError:
            return str(backend)

    def run(self, inputs, outputs):
        outputs[0].copy_(self._sdpa(*inputs))

    def artifacts(self):
        import torch

        lines = ["torch %s: F.scaled_dot_product_attention's backend by q, k, v shapes" %
                 torch.__version__]
        lines += ["%s: %s" % kv for kv in getattr(self, "_backends", {}).items()]
        return [("source", "sdpa.txt", "\n".join(lines) + "\n")]


class TorchSdpa(_TorchSdpa):
    name, device = "torch_sdpa", "cuda"


class TorchSdpaCpu(_TorchSdpa):
    name, device = "torch_sdpa_cpu", "cpu"
