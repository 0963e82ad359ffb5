"""The Triton kernels the shipped arms share (a helper module: files named _*.py are imported by
the others, not scanned for arms). Made at the first use, when Triton is imported.

relu is where(s <= 0, 0, s): negatives and -0 become +0, NaN stays NaN (NaN <= 0 is false).
tl.maximum(s, 0) would drop NaN (PTX max returns the other operand). Offsets are 64-bit (more
than 2^31 elements) and the last block is masked.

Precision: the kernels load any float dtype (f32, f16, bf16), compute in float32 and round the
result once to the output's element type: .to(out_ptr.dtype.element_ty), which for a narrowing
float cast rounds to nearest even (Triton's cast defaults fp_downcast_rounding to RTNE; tl.store
would make the same cast implicitly). For f32 tensors both conversions are no-ops.
"""

_jit = {}


def launch(fn, a, b, out, block=1024, **options):
    """fn(a, b, out, n) over out's n elements, one program per `block`, on torch's current
    stream; returns the compiled kernel (what Triton's launch returns)."""
    import triton

    n = out.numel()
    return fn[(triton.cdiv(n, block),)](a, b, out, n, BLOCK=block, **options)


def kernels():
    if _jit:
        return _jit
    import triton
    import triton.language as tl

    @triton.jit
    def residual_relu(x_ptr, r_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        s = x + tl.load(r_ptr + offs, mask=mask).to(tl.float32)
        result = tl.where(s <= 0.0, 0.0, s)
        tl.store(out_ptr + offs, result.to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def silu_mul(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
        # silu = x * sigmoid(x), sigmoid from e = exp(-|x|) in (0, 1]: x / (1 + exp(-x))
        # overflows exp below x = -88.7 and gives -0 where silu(x) * y is still a float32
        # (and bf16) subnormal or normal, which an {ulp: 1} rule sees.
        e = tl.exp(-tl.abs(x))
        result = x * (tl.where(x >= 0.0, 1.0, e) / (1.0 + e)) * y
        tl.store(out_ptr + offs, result.to(out_ptr.dtype.element_ty), mask=mask)

    _jit.update(residual_relu=residual_relu, silu_mul=silu_mul)
    return _jit
