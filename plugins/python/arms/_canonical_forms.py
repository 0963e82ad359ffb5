"""Canonical forms (what `kq check-spec SPEC` prints under "canonical form": names by place) that
more than one arm file matches with kq.computes: the Triton rows arms and the torch arms'
library calls recognise softmax and log-softmax over a matrix's last dim by the same text."""

SOFTMAX = """
    tmp0[i0] = max(i1, in0[i0, i1])
    tmp1[i0, i1] = exp(sub(in0[i0, i1], tmp0[i0]))
    tmp2[i0] = sum(i1, tmp1[i0, i1])
    out0[i0, i1] = div(tmp1[i0, i1], tmp2[i0])
    shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0, d1] tmp2[d0]
    """

LOG_SOFTMAX = """
    tmp0[i0] = max(i1, in0[i0, i1])
    tmp1[i0] = log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0]))))
    out0[i0, i1] = sub(sub(in0[i0, i1], tmp0[i0]), tmp1[i0])
    shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0]
    """
