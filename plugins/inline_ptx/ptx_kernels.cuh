// relu(x + residual) with every global access in inline PTX (ptx_access.cuh), for f32 (the
// formula of fused_math.cuh) and for f16 and bf16 (the PTX x2 instructions of ptx_half.cuh).
//   ptx_vector_kernel: all three pointers 16-byte aligned (checked by the host): U 16-byte
//                      vectors (float4, or uint4 of 8 halves) of each input per thread loaded
//                      before the first is used, chunks of U*T vectors per block, grid-stride;
//                      the tail of fewer than one vector by the first threads, in scalar PTX.
//   ptx_scalar_kernel: any alignment of the element: U elements per input per thread in flight,
//                      coalesced.
// 64-bit indices.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "fused_math.cuh"
#include "ptx_access.cuh"
#include "ptx_half.cuh"

namespace kq::ptx {

// The element type E as the kernels move it: S one element, V one 16-byte vector of kPerVec,
// and the formula on each.
template <class E>
struct PtxElem {  // __half, __nv_bfloat16: bits, computed by ptx_half.cuh
  using S = unsigned short;
  using V = uint4;
  static constexpr int kPerVec = 8;
  __device__ __forceinline__ static S residual_relu(S x, S r) {
    return relu_sum1(x, r, static_cast<const E*>(nullptr));
  }
  __device__ __forceinline__ static V residual_relu(V x, V r) {
    const E* t = nullptr;
    return make_uint4(relu_sum2(x.x, r.x, t), relu_sum2(x.y, r.y, t), relu_sum2(x.z, r.z, t),
                      relu_sum2(x.w, r.w, t));
  }
};

template <>
struct PtxElem<float> {
  using S = float;
  using V = float4;
  static constexpr int kPerVec = 4;
  __device__ __forceinline__ static float residual_relu(float x, float r) {
    return fused::ResidualReluFn{}(x, r);
  }
  __device__ __forceinline__ static float4 residual_relu(float4 x, float4 r) {
    return make_float4(residual_relu(x.x, r.x), residual_relu(x.y, r.y), residual_relu(x.z, r.z),
                       residual_relu(x.w, r.w));
  }
};

// One thread's share of a chunk of V (an element or a vector) values: i + k * T for k < U, all U
// of each input loaded (into xv, rv) before the first is used. Bounded (the last, partial
// chunk): only those below n. xv and rv are the kernel's, declared in its loop: so the kernels
// compile to the PTX they had when each wrote these loops out itself.
template <class E, int U, int T, bool Bounded, class V>
__device__ __forceinline__ void residual_relu_chunk(const V* x, const V* r, V* out, std::int64_t i,
                                                    std::int64_t n, V (&xv)[U], V (&rv)[U]) {
#pragma unroll
  for (int k = 0; k < U; ++k) {
    if (!Bounded || i + k * T < n) {
      xv[k] = ld_stream(x + i + k * T);
      rv[k] = ld_stream(r + i + k * T);
    }
  }
#pragma unroll
  for (int k = 0; k < U; ++k)
    if (!Bounded || i + k * T < n)
      st_stream(out + i + k * T, PtxElem<E>::residual_relu(xv[k], rv[k]));
}

template <class E, int U, int T>
__global__ void __launch_bounds__(T)
    ptx_vector_kernel(const void* xp, const void* rp, void* outp, std::int64_t n) {
  using P = PtxElem<E>;
  using S = typename P::S;
  using V = typename P::V;
  const auto* x = static_cast<const S*>(xp);
  const auto* r = static_cast<const S*>(rp);
  auto* out = static_cast<S*>(outp);
  const std::int64_t nvec = n / P::kPerVec;
  const auto* x4 = reinterpret_cast<const V*>(x);
  const auto* r4 = reinterpret_cast<const V*>(r);
  auto* o4 = reinterpret_cast<V*>(out);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < nvec; i += stride) {
    V xv[U], rv[U];
    if (i - threadIdx.x + kChunk <= nvec)  // a full chunk: no bounds checks
      residual_relu_chunk<E, U, T, false>(x4, r4, o4, i, nvec, xv, rv);
    else
      residual_relu_chunk<E, U, T, true>(x4, r4, o4, i, nvec, xv, rv);
  }
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * T + threadIdx.x;
  const std::int64_t j = nvec * P::kPerVec + t;
  if (j < n) st_stream(out + j, P::residual_relu(ld_stream(x + j), ld_stream(r + j)));
}

template <class E, int U, int T>
__global__ void __launch_bounds__(T)
    ptx_scalar_kernel(const void* xp, const void* rp, void* outp, std::int64_t n) {
  using S = typename PtxElem<E>::S;
  const auto* x = static_cast<const S*>(xp);
  const auto* r = static_cast<const S*>(rp);
  auto* out = static_cast<S*>(outp);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < n; i += stride) {
    S xv[U], rv[U];
    residual_relu_chunk<E, U, T, true>(x, r, out, i, n, xv, rv);
  }
}

}  // namespace kq::ptx
