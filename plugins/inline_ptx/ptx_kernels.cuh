// relu(x + residual) with every global access in inline PTX (ptx_access.cuh).
//   ptx_vector_kernel: all three pointers 16-byte aligned (checked by the host): U float4 of each
//                      input per thread loaded before the first is used, chunks of U*T float4
//                      per block, grid-stride; the n % 4 tail by the first threads, in scalar PTX.
//   ptx_scalar_kernel: any 4-byte alignment: U floats per input per thread in flight, coalesced.
// 64-bit indices. The formula is fused_math.cuh's, shared with the other CUDA arms.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "fused_math.cuh"
#include "ptx_access.cuh"

namespace kq::ptx {

// The formula (fused_math.cuh), on one element or on four.
__device__ __forceinline__ float residual_relu(float x, float r) {
  return fused::ResidualReluFn{}(x, r);
}

__device__ __forceinline__ float4 residual_relu(float4 x, float4 r) {
  return make_float4(residual_relu(x.x, r.x), residual_relu(x.y, r.y), residual_relu(x.z, r.z),
                     residual_relu(x.w, r.w));
}

// One thread's share of a chunk of V (float or float4) elements: elements i + k * T for k < U,
// all U of each input loaded (into xv, rv) before the first is used. Bounded (the last, partial
// chunk): only those below n. xv and rv are the kernel's, declared in its loop: so the kernels
// compile to the PTX they had when each wrote these loops out itself.
template <int U, int T, bool Bounded, class V>
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
    if (!Bounded || i + k * T < n) st_stream(out + i + k * T, residual_relu(xv[k], rv[k]));
}

template <int U, int T>
__global__ void __launch_bounds__(T)
    ptx_vector_kernel(const float* x, const float* r, float* out, std::int64_t n) {
  const std::int64_t nvec = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* r4 = reinterpret_cast<const float4*>(r);
  auto* o4 = reinterpret_cast<float4*>(out);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < nvec; i += stride) {
    float4 xv[U], rv[U];
    if (i - threadIdx.x + kChunk <= nvec)  // a full chunk: no bounds checks
      residual_relu_chunk<U, T, false>(x4, r4, o4, i, nvec, xv, rv);
    else
      residual_relu_chunk<U, T, true>(x4, r4, o4, i, nvec, xv, rv);
  }
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * T + threadIdx.x;
  const std::int64_t j = nvec * 4 + t;
  if (j < n) st_stream(out + j, residual_relu(ld_stream(x + j), ld_stream(r + j)));
}

template <int U, int T>
__global__ void __launch_bounds__(T)
    ptx_scalar_kernel(const float* x, const float* r, float* out, std::int64_t n) {
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < n; i += stride) {
    float xv[U], rv[U];
    residual_relu_chunk<U, T, true>(x, r, out, i, n, xv, rv);
  }
}

}  // namespace kq::ptx
