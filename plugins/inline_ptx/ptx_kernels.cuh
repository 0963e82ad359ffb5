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

template <int U, int T>
__global__ void __launch_bounds__(T)
    ptx_vector_kernel(const float* x, const float* r, float* out, std::int64_t n) {
  const fused::ResidualReluFn f{};
  const std::int64_t nvec = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* r4 = reinterpret_cast<const float4*>(r);
  auto* o4 = reinterpret_cast<float4*>(out);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < nvec; i += stride) {
    float4 xv[U], rv[U];
    if (i - threadIdx.x + kChunk <= nvec) {  // a full chunk: no bounds checks
#pragma unroll
      for (int k = 0; k < U; ++k) {
        xv[k] = ld_stream_v4(x4 + i + k * T);
        rv[k] = ld_stream_v4(r4 + i + k * T);
      }
#pragma unroll
      for (int k = 0; k < U; ++k)
        st_stream_v4(o4 + i + k * T, make_float4(f(xv[k].x, rv[k].x), f(xv[k].y, rv[k].y),
                                                 f(xv[k].z, rv[k].z), f(xv[k].w, rv[k].w)));
    } else {
#pragma unroll
      for (int k = 0; k < U; ++k) {
        if (i + k * T < nvec) {
          xv[k] = ld_stream_v4(x4 + i + k * T);
          rv[k] = ld_stream_v4(r4 + i + k * T);
        }
      }
#pragma unroll
      for (int k = 0; k < U; ++k)
        if (i + k * T < nvec)
          st_stream_v4(o4 + i + k * T, make_float4(f(xv[k].x, rv[k].x), f(xv[k].y, rv[k].y),
                                                   f(xv[k].z, rv[k].z), f(xv[k].w, rv[k].w)));
    }
  }
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * T + threadIdx.x;
  const std::int64_t j = nvec * 4 + t;
  if (j < n) st_stream(out + j, f(ld_stream(x + j), ld_stream(r + j)));
}

template <int U, int T>
__global__ void __launch_bounds__(T)
    ptx_scalar_kernel(const float* x, const float* r, float* out, std::int64_t n) {
  const fused::ResidualReluFn f{};
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < n; i += stride) {
    float xv[U], rv[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (i + k * T < n) {
        xv[k] = ld_stream(x + i + k * T);
        rv[k] = ld_stream(r + i + k * T);
      }
    }
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (i + k * T < n) st_stream(out + i + k * T, f(xv[k], rv[k]));
  }
}

}  // namespace kq::ptx
