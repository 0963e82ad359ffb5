// relu(x + residual) on f16 and bf16 in the PTX half instructions, two elements per 32-bit word:
//   add.rn.f16x2 / add.rn.bf16x2 (bf16x2 add needs sm_90): one addition correctly rounded to the
//     half type, which is the float64 sum rounded once, exactly what the contract's "compute in
//     float32, round once" gives too (a single + is exact-once-rounded either way);
//   max.NaN.f16x2 / max.NaN.bf16x2 (sm_80+) against +0: relu. .NaN makes a NaN operand give
//     (canonical) NaN, as the reference's relu(NaN) = NaN; plain max.f16x2 returns the other
//     operand, 0, which is wrong on the ieee spec (residual_relu_f16). Zeros: these max forms
//     order +0 above -0 (cuda_fp16.h / cuda_bf16.h document __hmax2_nan, which is max.NaN.f16x2,
//     so), so relu(-0) = max(-0, +0) = +0 as the spec requires.
// The one-element forms (add.rn.f16, max.NaN.f16 and their bf16 twins) serve heads and tails.
// Values are bits only (unsigned short, unsigned): no conversion anywhere.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kq::ptx {

// relu_sum2 (one 32-bit word: a pair) and relu_sum1 (one element) for the half type H, whose
// PTX type name is P (f16 or bf16); the pointer argument only picks the type.
#define KQ_PTX_RELU_SUM(H, P)                                                             \
  __device__ __forceinline__ unsigned relu_sum2(unsigned x, unsigned r, const H*) {       \
    unsigned d;                                                                           \
    asm("{.reg .b32 s;\n\tadd.rn." #P "x2 s, %1, %2;\n\tmax.NaN." #P "x2 %0, s, %3;\n\t}" \
        : "=r"(d)                                                                         \
        : "r"(x), "r"(r), "r"(0u));                                                       \
    return d;                                                                             \
  }                                                                                       \
  __device__ __forceinline__ unsigned short relu_sum1(unsigned short x, unsigned short r, \
                                                      const H*) {                         \
    unsigned short d;                                                                     \
    asm("{.reg .b16 s;\n\tadd.rn." #P " s, %1, %2;\n\tmax.NaN." #P " %0, s, %3;\n\t}"     \
        : "=h"(d)                                                                         \
        : "h"(x), "h"(r), "h"(static_cast<unsigned short>(0)));                           \
    return d;                                                                             \
  }

KQ_PTX_RELU_SUM(__half, f16)
KQ_PTX_RELU_SUM(__nv_bfloat16, bf16)
#undef KQ_PTX_RELU_SUM

}  // namespace kq::ptx
