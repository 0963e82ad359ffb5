// The device formulas of the fused ops, written once for every CUDA arm of this folder's
// plugins. Each reproduces the float64 reference (evaluated in double, rounded once to float)
// as the spec's compare rule demands; the _rn intrinsics pin each rounding so that no FMA
// contraction or fast-math rewrite can change a result, whatever flags a plugin is built with.
#pragma once
#include <cuda_runtime.h>

namespace kq::fused {

// relu(x + residual). The f32 sum is correctly rounded, so it equals the reference's double sum
// rounded to float (double has more than 2*24+2 bits: no double-rounding error), and relu
// commutes with that rounding. relu(s) = s > 0 ? s : +0 with NaN kept is written as one
// unordered test: `s <= 0` is false for NaN, so NaN passes through, and -0 <= 0 gives +0.
// fmaxf(s, 0) would be wrong twice: it returns 0 for NaN and may return -0.
struct ResidualReluFn {
  static constexpr int kInputs = 2;
  __device__ __forceinline__ float operator()(float x, float residual) const {
    const float s = __fadd_rn(x, residual);
    return s <= 0.0f ? 0.0f : s;
  }
};

// silu(x) * y in float, with the stable logistic: e = exp(-|x|) in (0, 1] never overflows, so
// silu(x) = x / (1 + e) for x >= 0 and x * e / (1 + e) below, one division either way: a
// division in each branch ran 536 us at 2^28 bf16 on the H200 where nvrtc_jit's single one ran
// 371 us (this form is nvrtc_jit's; not yet timed here). The textbook x / (1 + exp(-x))
// overflows expf below x = -88.7 and gives -0 where silu(x) * y is still a float32 (and bf16)
// subnormal or normal number: an {ulp: 1} rule (silu_mul_bf16) rejects that. expf is the
// accurate one (never __expf; plugins are built without --use_fast_math); adds, divides and
// multiplies are correctly rounded. NaN propagates through expf; silu(-inf) = -inf * 0 = NaN and
// silu(inf) = inf, as in the reference.
struct SiluMulFn {
  static constexpr int kInputs = 2;
  __device__ __forceinline__ float operator()(float x, float y) const {
    const float e = expf(-fabsf(x));
    const float d = __fadd_rn(1.0f, e);
    return __fmul_rn(__fdiv_rn(x >= 0.0f ? x : __fmul_rn(x, e), d), y);
  }
};

// select(x > 0, x, 0.01 * x). The reference multiplies by the double 0.01 and rounds the double
// product once to float; doing exactly that here (x widened exactly, __dmul_rn, then
// __double2float_rn, which keeps subnormals) gives the reference bit for bit, where x * 0.01f
// may land one ulp off. The spec only asks for 1 ulp; this arm is exact, and one double
// multiply per element costs nothing in a kernel bound by memory. NaN: x > 0 is false, and
// 0.01 * NaN is NaN.
struct LeakyReluFn {
  static constexpr int kInputs = 1;
  __device__ __forceinline__ float operator()(float x, float /*unused*/ = 0.0f) const {
    return x > 0.0f ? x : __double2float_rn(__dmul_rn(static_cast<double>(x), 0.01));
  }
};

}  // namespace kq::fused
