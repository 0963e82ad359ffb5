// Global loads and stores written as inline PTX, with the cache hints that measured best for a
// read-once, write-once stream on sm_90 (tools/bench_cuda_fused.cu, relu(x + residual) at 2^28
// elements on an H200, 1024-thread blocks, one pass):
//   loads  ld.global.nc.L2::256B: the read-only (non-coherent) path, with a 256-byte L2 prefetch
//          size hint (each miss fetches the whole 256-byte block for the neighbouring warps):
//          733 us; with no hint, or .L2::128B, or .L1::evict_last: the same within noise.
//          .L1::no_allocate and .L1::evict_first, valid on sm_90, both measured ~10% SLOWER
//          (808 us), so neither is used;
//   stores st.global.cs: "cache streaming", evict-first (written once, never read back here);
//          plain st.global and .L1::no_allocate measured the same.
// The .nc path is valid only for memory no thread writes during the kernel: callers guarantee
// that the output does not overlap the inputs. Every asm is volatile: a non-volatile asm counts
// as free of side effects, and the compiler could then run a load ahead of the bounds check
// that guards it. Loads have no memory clobber (the kernels issue all of a thread's loads
// before its first store anyway); stores have one, so nothing moves across them. Each access has
// a float and a float4 overload, and for the half types (bits only: unsigned short for one
// element, uint4 for eight) a .u16 and a .v4.u32 one.
#pragma once
#include <cuda_runtime.h>

namespace kq::ptx {

__device__ __forceinline__ float4 ld_stream(const float4* p) {
  float4 v;
  asm volatile("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ float ld_stream(const float* p) {
  float v;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void st_stream(float4* p, float4 v) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
               "f"(v.w)
               : "memory");
}

__device__ __forceinline__ void st_stream(float* p, float v) {
  asm volatile("st.global.cs.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ unsigned short ld_stream(const unsigned short* p) {
  unsigned short v;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void st_stream(uint4* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

__device__ __forceinline__ void st_stream(unsigned short* p, unsigned short v) {
  asm volatile("st.global.cs.u16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}

}  // namespace kq::ptx
