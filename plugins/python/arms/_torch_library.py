"""Whole format-2 programs that torch computes in one function: softmax and log-softmax over the
last dim of a matrix, and the mean cross-entropy of rows of logits against integer targets,
recognised by their canonical form (kq.computes: the statements' structure, names by place,
never the op's name). torch_eager then runs what a PyTorch user writes (torch.softmax: one
kernel, where the statements are four: max, exp, sum, divide) and torch_compile compiles it
(Inductor's own softmax lowering). On the H200 at KernelBench 23's 4096 x 393216, eager
torch.softmax took 6.1 ms and the four statements 18.2 ms: against the latter every candidate's
speed-up over eager read three times too high.
"""
import kq

_SOFTMAX = """
    tmp0[i0] = max(i1, in0[i0, i1])
    tmp1[i0, i1] = exp(sub(in0[i0, i1], tmp0[i0]))
    tmp2[i0] = sum(i1, tmp1[i0, i1])
    out0[i0, i1] = div(tmp1[i0, i1], tmp2[i0])
    shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0, d1] tmp2[d0]
    """
_LOG_SOFTMAX = """
    tmp0[i0] = max(i1, in0[i0, i1])
    tmp1[i0] = log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0]))))
    out0[i0, i1] = sub(sub(in0[i0, i1], tmp0[i0]), tmp1[i0])
    shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0]
    """
_CROSS_ENTROPY = """
    tmp0[i0] = max(i1, in0[i0, i1])
    tmp1[i0] = add(tmp0[i0], log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0])))))
    out0 = div(sum(i0, sub(tmp1[i0], in0[i0, in1[i0]])), d0)
    shapes: in0[d0, d1] in1[d0] out0[] tmp0[d0] tmp1[d0]
    """
_FLOATS = ("f16", "bf16", "f32", "f64")


def call(spec, inputs, outputs, into_outputs):
    """The one line computing the spec's output from its inputs (their parameters' names, in
    declaration order) where the spec is one of the programs above, else None."""
    tensors = spec.program.tensors
    ins = [t.dtype for t in tensors if t.role == "input"]
    outs = [t.dtype for t in tensors if t.role == "output"]
    if kq.computes(spec, _SOFTMAX):
        return _rows("softmax", "_softmax", spec, ins[0], outs[0], inputs[0], outputs[0],
                     into_outputs)
    if kq.computes(spec, _LOG_SOFTMAX):
        return _rows("log_softmax", "_log_softmax", spec, ins[0], outs[0], inputs[0], outputs[0],
                     into_outputs)
    if kq.computes(spec, _CROSS_ENTROPY):
        return _cross_entropy(spec, ins, outs[0], inputs, outputs[0])
    return None


def _rows(fn, aten, spec, xd, yd, x, y, into_outputs):
    """torch's kernels read 16-bit inputs into f32 and round once, which is an f32 contract's;
    other dtype pairs are widened to DT and copied."""
    if xd not in _FLOATS or yd not in _FLOATS:
        return None
    native = xd == yd and (xd == spec.compute or (xd in ("f16", "bf16") and spec.compute == "f32"))
    if not native:
        return "%s.copy_(torch.%s(%s.to(DT), dim=1))" % (y, fn, x)
    if into_outputs:
        return "torch.ops.aten.%s.out(%s, 1, False, out=%s)" % (aten, x, y)
    return "%s.copy_(torch.%s(%s, dim=1))" % (y, fn, x)


def _cross_entropy(spec, ins, loss_dtype, inputs, loss):
    """F.cross_entropy's mean, into the 0-d output as the translator writes any scalar. Logits
    of another dtype than DT are widened: torch's 16-bit log-softmax rounds to 16 bits before
    the mean, which an f32 contract does not."""
    xd, td = ins
    if xd not in _FLOATS or loss_dtype not in _FLOATS or td not in ("i32", "i64"):
        return None
    x, t = inputs
    logits = x if xd == spec.compute else "%s.to(DT)" % x
    return "%s[...] = F.cross_entropy(%s, %s.long())" % (loss, logits, t)
