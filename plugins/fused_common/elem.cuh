// The element types of the hand-written CUDA arms (float, __half, __nv_bfloat16) as the kernels
// see them: loaded and widened exactly to float, the formula (fused_math.cuh) evaluated in float,
// the result rounded once to the element type, to nearest even (__float2half_rn,
// __float2bfloat16_rn and their x2 forms: the contract of the half specs, compute f32). A
// 16-byte vector holds 4 floats (float4) or 8 halves (uint4: four __half2 / __nv_bfloat162).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>

#include "kq/tensor.hpp"

namespace kq::fused {

template <class E>
struct Elem;

template <>
struct Elem<float> {
  using Vec = float4;
  static constexpr int kPerVec = 4;
  __device__ __forceinline__ static float widen(float v) { return v; }
  __device__ __forceinline__ static float round(float v) { return v; }
  template <class Fn>
  __device__ __forceinline__ static float4 apply(const Fn& f, float4 a, float4 b) {
    return make_float4(f(a.x, b.x), f(a.y, b.y), f(a.z, b.z), f(a.w, b.w));
  }
};

// The two half types differ only in their CUDA names: H (one element), H2 (a pair, one 32-bit
// word of the vector) and the four conversions that Traits names.
template <class H, class H2, class Traits>
struct HalfElem {
  using Vec = uint4;
  static constexpr int kPerVec = 8;
  __device__ __forceinline__ static float widen(H v) { return Traits::widen(v); }
  __device__ __forceinline__ static H round(float v) { return Traits::round(v); }
  // One word: two elements widened (low half first), computed, rounded as a pair.
  template <class Fn>
  __device__ __forceinline__ static unsigned pair(const Fn& f, unsigned a, unsigned b) {
    H2 ha, hb;
    std::memcpy(&ha, &a, 4);
    std::memcpy(&hb, &b, 4);
    const float2 fa = Traits::widen2(ha), fb = Traits::widen2(hb);
    const H2 r = Traits::round2(f(fa.x, fb.x), f(fa.y, fb.y));
    unsigned u;
    std::memcpy(&u, &r, 4);
    return u;
  }
  template <class Fn>
  __device__ __forceinline__ static uint4 apply(const Fn& f, uint4 a, uint4 b) {
    return make_uint4(pair(f, a.x, b.x), pair(f, a.y, b.y), pair(f, a.z, b.z), pair(f, a.w, b.w));
  }
};

struct HalfTraits {
  __device__ __forceinline__ static float widen(__half v) { return __half2float(v); }
  __device__ __forceinline__ static __half round(float v) { return __float2half_rn(v); }
  __device__ __forceinline__ static float2 widen2(__half2 v) { return __half22float2(v); }
  __device__ __forceinline__ static __half2 round2(float lo, float hi) {
    return __floats2half2_rn(lo, hi);
  }
};

struct BFloat16Traits {
  __device__ __forceinline__ static float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ __forceinline__ static __nv_bfloat16 round(float v) { return __float2bfloat16_rn(v); }
  __device__ __forceinline__ static float2 widen2(__nv_bfloat162 v) {
    return __bfloat1622float2(v);
  }
  __device__ __forceinline__ static __nv_bfloat162 round2(float lo, float hi) {
    return __floats2bfloat162_rn(lo, hi);
  }
};

template <>
struct Elem<__half> : HalfElem<__half, __half2, HalfTraits> {};
template <>
struct Elem<__nv_bfloat16> : HalfElem<__nv_bfloat16, __nv_bfloat162, BFloat16Traits> {};

// A two-input formula Fn (fused_math.cuh) on elements of E: both widened to float, the result
// rounded once (the identity for float).
template <class Fn, class E>
struct OnElem {
  __device__ __forceinline__ E operator()(E x, E y) const {
    return Elem<E>::round(Fn{}(Elem<E>::widen(x), Elem<E>::widen(y)));
  }
};

// f(static_cast<E*>(nullptr)) for E the element type of `t`: float for f32, __half for f16,
// __nv_bfloat16 for bf16 (callers have refused every other dtype; it gets float).
template <class F>
decltype(auto) with_elem(DType t, F&& f) {
  switch (t) {
    case DType::f16:
      return f(static_cast<__half*>(nullptr));
    case DType::bf16:
      return f(static_cast<__nv_bfloat16*>(nullptr));
    default:
      return f(static_cast<float*>(nullptr));
  }
}

}  // namespace kq::fused
