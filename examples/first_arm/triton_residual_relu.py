# A Triton arm in a function: relu(x + residual) on CUDA; f16 and bf16 are computed in float32.
#   kq list --python-arms examples/first_arm          # triton_residual_relu, from this file
#   kq run specs/residual_relu.yaml --python-arms examples/first_arm --arms triton_residual_relu
import functools

import kq


@functools.cache  # compiled at the first run: the file loads where Triton is not installed
def kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def residual_relu(x_ptr, r_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # n > 2^31 too
        mask = offs < n  # the last block's tail
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        s = x + tl.load(r_ptr + offs, mask=mask).to(tl.float32)
        relu = tl.where(s <= 0.0, 0.0, s)  # -0 -> +0, NaN stays NaN (tl.maximum would drop it)
        tl.store(out_ptr + offs, relu.to(out_ptr.dtype.element_ty), mask=mask)

    return residual_relu


@kq.arm(name="triton_residual_relu", device="cuda", family="triton",
        computes="relu(x + residual)", dtypes=("f32", "f16", "bf16"), contiguous_only=True,
        tensors="torch", requires=("torch", "triton"))
def triton_residual_relu(inputs, outputs):  # torch tensors over kq's buffers, on kq's stream
    (x, r), (out,) = inputs, outputs
    n = out.numel()
    kernel()[((n + 1023) // 1024,)](x, r, out, n, BLOCK=1024)
