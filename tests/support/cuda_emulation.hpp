// Host stand-ins for the CUDA built-ins that nvrtc_jit's generated row and column kernels use,
// so that tests/unit/test_nvrtc_emulated.cpp compiles the generated source with the host C++
// compiler and runs it without a GPU. One block runs at a time, each of its threads a
// std::thread: __syncthreads is a barrier of the block, a warp shuffle an exchange through
// memory between two barriers (the kernels call both uniformly, as CUDA requires), and
// __shared__ is a function-local static (one copy, the running block's).
//
// What it cannot show: timing, coalescing, the memory model beyond barriers, and the device's
// own math library (expf and the others are the host's, a few ulps apart). tests/gpu/
// test_nvrtc_rows.cpp runs the same kernels on a GPU.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static

struct kq_emu_dim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local kq_emu_dim3 threadIdx, blockIdx;
inline kq_emu_dim3 blockDim, gridDim;

namespace kq_emu {
inline std::barrier<>* block_barrier = nullptr;
inline float lanes[1024];
}  // namespace kq_emu

inline void __syncthreads() { kq_emu::block_barrier->arrive_and_wait(); }

inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  kq_emu::lanes[threadIdx.x] = v;
  __syncthreads();
  const float r = kq_emu::lanes[threadIdx.x ^ static_cast<unsigned>(lane_mask)];
  __syncthreads();
  return r;
}

// The same for a 64-bit value (an argmax's position).
inline long long __shfl_xor_sync(unsigned, long long v, int lane_mask) {
  static long long wide[1024];
  wide[threadIdx.x] = v;
  __syncthreads();
  const long long r = wide[threadIdx.x ^ static_cast<unsigned>(lane_mask)];
  __syncthreads();
  return r;
}

// The value of the lane `delta` below, or the caller's own where there is none.
inline float __shfl_up_sync(unsigned, float v, unsigned delta) {
  kq_emu::lanes[threadIdx.x] = v;
  __syncthreads();
  const float r = (threadIdx.x & 31u) >= delta ? kq_emu::lanes[threadIdx.x - delta] : v;
  __syncthreads();
  return r;
}

// Blocks run one after another, and in a block only thread 0 counts: a plain add is atomic
// enough; the fences order nothing that the barriers and the join do not.
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old + v;
  return old;
}
inline void __threadfence() {}

// One IEEE operation each, rounded to nearest even (the host's default; the test compiles with
// -ffp-contract=off so that none is fused).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }

inline int __float_as_int(float a) {
  int i;
  std::memcpy(&i, &a, 4);
  return i;
}
inline float __int_as_float(int i) {
  float a;
  std::memcpy(&a, &i, 4);
  return a;
}
inline long long __double_as_longlong(double a) {
  long long i;
  std::memcpy(&i, &a, 8);
  return i;
}
using std::isfinite;

// f16 through the host's _Float16; bf16 as its bits, widened exactly and rounded to nearest
// even as cuda_bf16.h does.
struct __half {
  _Float16 v;
};
inline float __half2float(__half h) { return static_cast<float>(h.v); }
inline __half __float2half_rn(float f) { return {static_cast<_Float16>(f)}; }

struct __nv_bfloat16 {
  std::uint16_t bits;
};
inline float __bfloat162float(__nv_bfloat16 b) {
  const std::uint32_t u = std::uint32_t{b.bits} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return {static_cast<std::uint16_t>((u >> 16) | 0x40)};
  u += 0x7fff + ((u >> 16) & 1);
  return {static_cast<std::uint16_t>(u >> 16)};
}

namespace kq_emu {
// Runs `thread` (a call of the kernel) for every thread of a grid of `blocks` x `block`, one
// block at a time.
template <class Thread>
void launch(unsigned blocks, unsigned block, Thread thread) {
  gridDim = {blocks, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < blocks; ++b) {
    std::barrier<> sync(block);
    block_barrier = &sync;
    std::vector<std::thread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, b, t] {
        blockIdx = {b, 0, 0};
        threadIdx = {t, 0, 0};
        thread();
      });
    for (std::thread& t : threads) t.join();
  }
}
}  // namespace kq_emu
