"""Whole format-2 programs that torch computes in one function: softmax and log-softmax over the
last dim of a matrix, the mean cross-entropy of rows of logits against integer targets, and
batch, instance, group and layer norm as KernelBench states them, recognised by their canonical
form (kq.computes: the statements' structure, names by place, never the op's name). torch_eager
then runs what a PyTorch user writes (torch.softmax: one kernel, where the statements are four:
max, exp, sum, divide) and torch_compile compiles it (Inductor's own softmax lowering). On the H200 at KernelBench 23's 4096 x 393216, eager
torch.softmax took 6.1 ms and the four statements 18.2 ms: against the latter every candidate's
speed-up over eager read three times too high.
"""
import kq
from _canonical_forms import LOG_SOFTMAX as _LOG_SOFTMAX
from _canonical_forms import SOFTMAX as _SOFTMAX

_CROSS_ENTROPY = """
    tmp0[i0] = max(i1, in0[i0, i1])
    tmp1[i0] = add(tmp0[i0], log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0])))))
    out0 = div(sum(i0, sub(tmp1[i0], in0[i0, in1[i0]])), d0)
    shapes: in0[d0, d1] in1[d0] out0[] tmp0[d0] tmp1[d0]
    """

# The norms of KernelBench 33, 34, 35 and 40: batch norm (training: the batch's statistics) per
# channel of NCHW, instance norm per (sample, channel) without weights, group norm over a
# (B, G, CG, H, W) view with (G, CG) weights, layer norm over the three trailing dims.
_BATCH_NORM = """
    tmp0[i0] = div(sum((i1, i2, i3), in0[i1, i0, i2, i3]), mul(mul(d0, d2), d3))
    tmp1[i0] = div(sum((i1, i2, i3), mul(sub(in0[i1, i0, i2, i3], tmp0[i0]), sub(in0[i1, i0, i2, i3], tmp0[i0]))), mul(mul(d0, d2), d3))
    tmp2[i0] = div(1, sqrt(add(tmp1[i0], p0)))
    out0[i0, i1, i2, i3] = add(mul(mul(sub(in0[i0, i1, i2, i3], tmp0[i1]), tmp2[i1]), in1[i1]), in2[i1])
    shapes: in0[d0, d1, d2, d3] in1[d1] in2[d1] out0[d0, d1, d2, d3] tmp0[d1] tmp1[d1] tmp2[d1]
    """
_INSTANCE_NORM = """
    tmp0[i0, i1] = div(sum((i2, i3), in0[i0, i1, i2, i3]), mul(d2, d3))
    tmp1[i0, i1] = div(sum((i2, i3), mul(sub(in0[i0, i1, i2, i3], tmp0[i0, i1]), sub(in0[i0, i1, i2, i3], tmp0[i0, i1]))), mul(d2, d3))
    tmp2[i0, i1] = div(1, sqrt(add(tmp1[i0, i1], p0)))
    out0[i0, i1, i2, i3] = mul(sub(in0[i0, i1, i2, i3], tmp0[i0, i1]), tmp2[i0, i1])
    shapes: in0[d0, d1, d2, d3] out0[d0, d1, d2, d3] tmp0[d0, d1] tmp1[d0, d1] tmp2[d0, d1]
    """
_GROUP_NORM = """
    tmp0[i0, i1] = div(sum((i2, i3, i4), in0[i0, i1, i2, i3, i4]), mul(mul(d2, d3), d4))
    tmp1[i0, i1] = div(sum((i2, i3, i4), mul(sub(in0[i0, i1, i2, i3, i4], tmp0[i0, i1]), sub(in0[i0, i1, i2, i3, i4], tmp0[i0, i1]))), mul(mul(d2, d3), d4))
    tmp2[i0, i1] = div(1, sqrt(add(tmp1[i0, i1], p0)))
    out0[i0, i1, i2, i3, i4] = add(mul(mul(sub(in0[i0, i1, i2, i3, i4], tmp0[i0, i1]), tmp2[i0, i1]), in1[i1, i2]), in2[i1, i2])
    shapes: in0[d0, d1, d2, d3, d4] in1[d1, d2] in2[d1, d2] out0[d0, d1, d2, d3, d4] tmp0[d0, d1] tmp1[d0, d1] tmp2[d0, d1]
    """
_LAYER_NORM = """
    tmp0[i0] = div(sum((i1, i2, i3), in0[i0, i1, i2, i3]), mul(mul(d1, d2), d3))
    tmp1[i0] = div(sum((i1, i2, i3), mul(sub(in0[i0, i1, i2, i3], tmp0[i0]), sub(in0[i0, i1, i2, i3], tmp0[i0]))), mul(mul(d1, d2), d3))
    tmp2[i0] = div(1, sqrt(add(tmp1[i0], p0)))
    out0[i0, i1, i2, i3] = add(mul(mul(sub(in0[i0, i1, i2, i3], tmp0[i0]), tmp2[i0]), in1[i1, i2, i3]), in2[i1, i2, i3])
    shapes: in0[d0, d1, d2, d3] in1[d1, d2, d3] in2[d1, d2, d3] out0[d0, d1, d2, d3] tmp0[d0] tmp1[d0] tmp2[d0]
    """
_FLOATS = ("f16", "bf16", "f32", "f64")


def call(spec, inputs, outputs, into_outputs, device):
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
    for form, norm in _NORMS:
        if kq.computes(spec, form):
            if any(d != spec.compute for d in ins + outs):
                return None  # torch's norms return their input's dtype: no widening here
            eps = repr(float(spec.program.params[0].value))
            return norm(inputs, outputs[0], eps, into_outputs and _has_out(norm, device))
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


# Each norm as (the line, given the parameters' names, eps as text and whether to write through
# the aten operation's out=): torch's function and a copy_ (what torch.compile folds into its
# kernel), or in eager the aten operation into the output itself, its statistics into scratch,
# where this torch has it on the device (_has_out). torch.batch_norm and torch.instance_norm,
# not F's: F's refuse one value per channel (B = H = W = 1), which the contract admits. An
# output is written through a view(): one that is not a view of it raises rather than leaving
# the output unwritten.
def _batch_norm(inputs, y, eps, out):
    x, w, b = inputs
    if not out:
        return ("%s.copy_(torch.batch_norm(%s, %s, %s, None, None, True, 0.0, %s, True))"
                % (y, x, w, b, eps))
    return ("torch.ops.aten.native_batch_norm.out(%s, %s, %s, None, None, True, 0.0, %s, out=%s, "
            "save_mean=%s.new_empty(%s.shape[1]), save_invstd=%s.new_empty(%s.shape[1]))"
            % (x, w, b, eps, y, x, x, x, x))


def _instance_norm(inputs, y, eps, out):
    (x,) = inputs
    if not out:
        return ("%s.copy_(torch.instance_norm(%s, None, None, None, None, True, 0.0, %s, True))"
                % (y, x, eps))
    # torch's instance norm: batch norm over the (1, B * C, H, W) view, as F.instance_norm does.
    return ("torch.ops.aten.native_batch_norm.out(%s.reshape(1, -1, *%s.shape[2:]), None, None, "
            "None, None, True, 0.0, %s, out=%s.view(1, -1, *%s.shape[2:]), save_mean=%s.new_empty("
            "%s.shape[0] * %s.shape[1]), save_invstd=%s.new_empty(%s.shape[0] * %s.shape[1]))"
            % (x, x, eps, y, y, x, x, x, x, x, x))


def _group_norm(inputs, y, eps, out):
    x, w, b = inputs
    if not out:
        return ("%s.copy_(F.group_norm(%s.flatten(1, 2), %s.shape[1], %s.flatten(), %s.flatten(), "
                "%s).view_as(%s))" % (y, x, x, w, b, eps, y))
    return ("torch.ops.aten.native_group_norm.out(%s.flatten(1, 2), %s.flatten(), %s.flatten(), "
            "%s.shape[0], %s.shape[1] * %s.shape[2], %s.shape[3] * %s.shape[4], %s.shape[1], %s, "
            "out0=%s.view(%s.shape[0], -1, *%s.shape[3:]), out1=%s.new_empty(%s.shape[:2]), "
            "out2=%s.new_empty(%s.shape[:2]))"
            % (x, w, b, x, x, x, x, x, x, eps, y, y, y, x, x, x, x))


def _layer_norm(inputs, y, eps, out):
    x, w, b = inputs
    if not out:
        return "%s.copy_(F.layer_norm(%s, %s.shape[1:], %s, %s, %s))" % (y, x, x, w, b, eps)
    return ("torch.ops.aten.native_layer_norm.out(%s, %s.shape[1:], %s, %s, %s, out0=%s, "
            "out1=%s.new_empty(%s.shape[0], 1, 1, 1), out2=%s.new_empty(%s.shape[0], 1, 1, 1))"
            % (x, x, w, b, eps, y, x, x, x, x))


_NORMS = ((_BATCH_NORM, _batch_norm), (_INSTANCE_NORM, _instance_norm),
          (_GROUP_NORM, _group_norm), (_LAYER_NORM, _layer_norm))
# Each norm's probe: its inputs' shapes, x first.
_PROBE_SHAPES = {_batch_norm: [(2, 3, 4, 5), (3,), (3,)], _instance_norm: [(2, 3, 4, 5)],
                 _group_norm: [(2, 2, 3, 4, 5), (2, 3), (2, 3)],
                 _layer_norm: [(2, 3, 4, 5), (3, 4, 5), (3, 4, 5)]}
_PROBED = {}


def _has_out(norm, device):
    """Whether this torch runs norm's aten out= operation on `device` (torch 1.13 has no CPU
    kernel for native_batch_norm.out): tried once on small tensors, as the arm's line would."""
    key = (norm.__name__, device)
    if key not in _PROBED:
        import torch
        import torch.nn.functional as F

        args = [torch.rand(s, device=device) + 0.5 for s in _PROBE_SHAPES[norm]]
        names = ["a%d" % k for k in range(len(args))]
        scope = dict(zip(names, args), y=torch.empty_like(args[0]), torch=torch, F=F)
        try:
            exec(norm(names, "y", "1e-05", True), scope)
            want = scope["y"].clone()
            exec(norm(names, "y", "1e-05", False), scope)
            _PROBED[key] = bool(torch.allclose(want, scope["y"], rtol=1e-4, atol=1e-5))
        except (RuntimeError, NotImplementedError, TypeError):
            _PROBED[key] = False
    return _PROBED[key]
