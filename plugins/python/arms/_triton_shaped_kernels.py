"""The Triton kernels of triton_shaped.py's arms (a helper module: files named _*.py are imported
by the others, not scanned for arms): row-wise softmax, log-softmax, layer norm and RMS norm over
the last dim of an (M, N) matrix. Made at the first use, when Triton is imported.

Two designs per operation, both one program per row (grid (M,)):

  *_row    the whole row in registers: BLOCK is the next power of two of N (masked tail), one
           load of x, one store of y;
  *_loop   rows longer than the largest BLOCK: the row in chunks of BLOCK. A first pass over
           the chunks gathers the row's statistics (online max and sum of exp; the sum; the
           sum of squares), a second pass writes y. The second pass walks the chunks from the
           last to the first, so that the chunks the first pass read last, the likeliest still
           in L2, are read again first.

Offsets are 64-bit at the row (row * stride as int64: M * N may pass 2^31 elements); within a
row they are 32-bit (N < 2^31). Everything is computed in float32: x, w, b are loaded in their
dtypes (f32, f16, bf16) and widened; each output is rounded once to its element type on store
(.to(ptr.dtype.element_ty), round to nearest even).

Softmax and log-softmax subtract the row's max. Masked lanes load -inf, whose exp is 0. The
looped pass 1 keeps a per-lane running max m and sum s (s rescaled by exp(m_old - m_new)), and
combines the lanes at the end: M = max(m), S = sum(s * exp(m - M)); a lane whose max is still
-inf (masked so far) uses 0 as its reference, so that no -inf - -inf makes a NaN.

Layer norm's variance is two-pass, never E[x^2] - E[x]^2: in the row kernel the mean first,
then the sum of squared deviations from it; in the looped kernel the same two passes over each
chunk in registers (the chunk's mean, the chunk's sum of squared deviations), the chunks merged
by Chan's formula (M2 += M2_c + delta^2 * n_a * n_c / (n_a + n_c)). The mean that is stored
and used is sum(x) / N. The row statistics (mean, 1 / sqrt(var + eps)) are computed with
correctly rounded division and square root (tl.div_rn, tl.sqrt_rn): one of each per row.
RMS norm: rstd = 1 / sqrt(sum(x^2) / N + eps), eps inside the root, y = (x * rstd) * w.

N is used as a float as N * 1.0, not N.to(tl.float32): Triton specializes an int argument equal
to 1 as a constexpr (the point N = 1), which has no .to.
"""

_jit = {}


def kernels():
    if _jit:
        return _jit
    import triton
    import triton.language as tl

    # ---- softmax: y = exp(x - max) / sum(exp(x - max))

    @triton.jit
    def softmax_row(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
        mx = tl.max(x, axis=0)
        e = tl.exp(x - mx)  # 0 in the masked lanes
        s = tl.sum(e, axis=0)
        y = e * (1.0 / s)
        tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def softmax_loop(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        cols = tl.arange(0, BLOCK)
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, N, BLOCK):
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, x)
            ref = tl.where(m_new == -float("inf"), 0.0, m_new)
            s = s * tl.exp(m - ref) + tl.exp(x - ref)
            m = m_new
        mx = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp(m - mx), axis=0)
        r = 1.0 / total
        chunks = tl.cdiv(N, BLOCK)
        for k in range(0, chunks):
            start = (chunks - 1 - k) * BLOCK
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp(x - mx) * r
            tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    # ---- log-softmax: y = (x - max) - log(sum(exp(x - max)))

    @triton.jit
    def log_softmax_row(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
        mx = tl.max(x, axis=0)
        d = x - mx
        lse = tl.log(tl.sum(tl.exp(d), axis=0))
        y = d - lse
        tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def log_softmax_loop(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        cols = tl.arange(0, BLOCK)
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, N, BLOCK):
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, x)
            ref = tl.where(m_new == -float("inf"), 0.0, m_new)
            s = s * tl.exp(m - ref) + tl.exp(x - ref)
            m = m_new
        mx = tl.max(m, axis=0)
        lse = tl.log(tl.sum(s * tl.exp(m - mx), axis=0))
        chunks = tl.cdiv(N, BLOCK)
        for k in range(0, chunks):
            start = (chunks - 1 - k) * BLOCK
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            y = (x - mx) - lse
            tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    # ---- layer norm: mean, rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * w + b

    @triton.jit
    def layer_norm_row(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, N, stride_x, stride_y,
                       eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        nf = N * 1.0
        mean = tl.div_rn(tl.sum(x, axis=0), nf)
        d = tl.where(mask, x - mean, 0.0)
        var = tl.div_rn(tl.sum(d * d, axis=0), nf)
        rstd = tl.div_rn(1.0, tl.sqrt_rn(var + eps))
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = d * rstd * w + b
        tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(mean_ptr + row, mean.to(mean_ptr.dtype.element_ty))
        tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))

    @triton.jit
    def layer_norm_loop(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, N, stride_x, stride_y,
                        eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        cols = tl.arange(0, BLOCK)
        total = 0.0  # sum(x)
        n_a = 0.0  # elements merged so far, their mean and sum of squared deviations
        mean_a = 0.0
        m2_a = 0.0
        for start in range(0, N, BLOCK):
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            n_c = tl.minimum(N - start, BLOCK).to(tl.float32)
            c_sum = tl.sum(x, axis=0)
            c_mean = c_sum / n_c
            d = tl.where(mask, x - c_mean, 0.0)
            c_m2 = tl.sum(d * d, axis=0)
            n_new = n_a + n_c
            delta = c_mean - mean_a
            mean_a = mean_a + delta * (n_c / n_new)
            m2_a = m2_a + c_m2 + delta * delta * (n_a * n_c / n_new)
            n_a = n_new
            total = total + c_sum
        nf = N * 1.0
        mean = tl.div_rn(total, nf)
        var = tl.div_rn(m2_a, nf)
        rstd = tl.div_rn(1.0, tl.sqrt_rn(var + eps))
        chunks = tl.cdiv(N, BLOCK)
        for k in range(0, chunks):
            start = (chunks - 1 - k) * BLOCK
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            y = (x - mean) * rstd * w + b
            tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(mean_ptr + row, mean.to(mean_ptr.dtype.element_ty))
        tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))

    # ---- RMS norm: rstd = 1 / sqrt(sum(x^2) / N + eps), y = x * rstd * w

    @triton.jit
    def rms_norm_row(x_ptr, w_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        ms = tl.div_rn(tl.sum(x * x, axis=0), N * 1.0)
        rstd = tl.div_rn(1.0, tl.sqrt_rn(ms + eps))
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = x * rstd * w
        tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def rms_norm_loop(x_ptr, w_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        cols = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, N, BLOCK):
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            acc += x * x
        ms = tl.div_rn(tl.sum(acc, axis=0), N * 1.0)
        rstd = tl.div_rn(1.0, tl.sqrt_rn(ms + eps))
        chunks = tl.cdiv(N, BLOCK)
        for k in range(0, chunks):
            start = (chunks - 1 - k) * BLOCK
            mask = start + cols < N
            x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            y = x * rstd * w
            tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    _jit.update(softmax_row=softmax_row, softmax_loop=softmax_loop,
                log_softmax_row=log_softmax_row, log_softmax_loop=log_softmax_loop,
                layer_norm_row=layer_norm_row, layer_norm_loop=layer_norm_loop,
                rms_norm_row=rms_norm_row, rms_norm_loop=rms_norm_loop)
    return _jit
