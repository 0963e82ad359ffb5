// The elementwise kernels of the cuda_fused arms, templated on the op's formula (fused_math.cuh)
// and on the launch shape. Three paths:
//   vector_kernel:  float4 loads and stores, U float4 per input per thread in flight; used when
//                   every pointer has the same offset from 16 bytes (a 0-3 element head is done
//                   in scalar first, the n % 4 tail after); chunks of U*T float4 per block. The
//                   arms launch one block per chunk (one pass); the loop covers a capped grid.
//   scalar_kernel:  one float per access, still coalesced (consecutive threads, consecutive
//                   elements), U per thread in flight; pointers with different offsets.
//   strided_kernel: any rank <= 8 and any strides (specs whose layouts admit strided views).
// Indices are 64-bit throughout. Nothing here is __restrict__: an output may be an input (in
// place, where the spec allows it); every element is read before the same thread writes it.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "args.hpp"
#include "fused_math.cuh"

namespace kq::fused {

template <Load L, class T>
__device__ __forceinline__ T load(const T* p) {
  if constexpr (L == Load::cs)
    return __ldcs(p);
  else if constexpr (L == Load::nc)
    return __ldg(p);
  else
    return *p;
}

template <Store S, class T>
__device__ __forceinline__ void store(T* p, T v) {
  if constexpr (S == Store::cs)
    __stcs(p, v);
  else
    *p = v;
}

template <class Fn>
__device__ __forceinline__ float4 apply4(const Fn& f, float4 a, float4 b) {
  return make_float4(f(a.x, b.x), f(a.y, b.y), f(a.z, b.z), f(a.w, b.w));
}

template <class Fn, Load L>
__device__ __forceinline__ float apply1(const Fn& f, const FlatArgs& a, std::int64_t i) {
  if constexpr (Fn::kInputs == 2)
    return f(load<L>(a.in0 + i), load<L>(a.in1 + i));
  else
    return f(load<L>(a.in0 + i));
}

// U float4 of each input are loaded before the first is used, so each thread has 2*U (or U)
// independent 16-byte loads in flight: with 2048 resident threads per SM and two inputs that is
// 64 KiB per SM outstanding at U = 1, above the ~30 KiB per SM that Little's law asks of HBM3e
// (4.8 TB/s, ~0.8 us latency, 132 SMs). Expected, then, and measured (variants.hpp): more in
// flight than U = 1 does not help. Full chunks take the branch-free path; only the last
// partial chunk checks bounds.
// Launch bounds: U = 1 asks for a full SM (2048 threads, so at most 32 registers), which is
// what the measured speed relies on; without it ptxas gave some instances 38-46 registers and
// so one 1024-thread block per SM. Deeper kernels ask for one block (up to 64 registers at 1024
// threads): with (T) alone ptxas aimed some at 32 registers and spilled.
template <int U, int T>
inline constexpr int kMinBlocks = U == 1 ? 2048 / T : 1;

// One thread's share of a chunk of float4: vectors base + k * T for k < U, all U of each input
// loaded (into xv and yv; yv is xv again for a one-input op) before the first is used. Bounded
// (the last, partial chunk): only those below nvec. xv and yv are the kernel's, declared in its
// loop: so vector_kernel compiles to the PTX it had when it wrote both loops out itself.
template <int T, Load L, Store S, bool Bounded, class Fn, int U>
__device__ __forceinline__ void vector_chunk(const Fn& f, const float4* x4, const float4* y4,
                                             float4* o4, std::int64_t base, std::int64_t nvec,
                                             float4 (&xv)[U], float4 (&yv)[U]) {
#pragma unroll
  for (int k = 0; k < U; ++k) {
    if (!Bounded || base + k * T < nvec) {
      xv[k] = load<L>(x4 + base + k * T);
      if constexpr (Fn::kInputs == 2)
        yv[k] = load<L>(y4 + base + k * T);
      else
        yv[k] = xv[k];
    }
  }
#pragma unroll
  for (int k = 0; k < U; ++k)
    if (!Bounded || base + k * T < nvec) store<S>(o4 + base + k * T, apply4(f, xv[k], yv[k]));
}

template <class Fn, int U, int T, Load L, Store S>
__global__ void __launch_bounds__(T, (kMinBlocks<U, T>)) vector_kernel(FlatArgs a) {
  const Fn f{};
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * T + threadIdx.x;
  if (tid < a.head) store<S>(a.out + tid, apply1<Fn, L>(f, a, tid));

  const std::int64_t nvec = (a.n - a.head) / 4;
  const auto* x4 = reinterpret_cast<const float4*>(a.in0 + a.head);
  const auto* y4 = reinterpret_cast<const float4*>(a.in1 + a.head);  // unused if one input
  auto* o4 = reinterpret_cast<float4*>(a.out + a.head);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t base = blockIdx.x * kChunk + threadIdx.x; base < nvec; base += stride) {
    float4 xv[U], yv[U];
    if (base - threadIdx.x + kChunk <= nvec)  // a full chunk: no bounds checks
      vector_chunk<T, L, S, false>(f, x4, y4, o4, base, nvec, xv, yv);
    else
      vector_chunk<T, L, S, true>(f, x4, y4, o4, base, nvec, xv, yv);
  }

  const std::int64_t tail = a.head + nvec * 4;  // the last (n - head) % 4 elements
  if (tid < a.n - tail) store<S>(a.out + tail + tid, apply1<Fn, L>(f, a, tail + tid));
}

// Coalesced scalar path: U floats per input per thread in flight, T apart.
template <class Fn, int U, int T, Load L, Store S>
__global__ void __launch_bounds__(T) scalar_kernel(FlatArgs a) {
  const Fn f{};
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t base = blockIdx.x * kChunk + threadIdx.x; base < a.n; base += stride) {
    float v[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (base + k * T < a.n) v[k] = apply1<Fn, L>(f, a, base + k * T);
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (base + k * T < a.n) store<S>(a.out + base + k * T, v[k]);
  }
}

template <class Fn, int T>
__global__ void __launch_bounds__(T) strided_kernel(StridedArgs a) {
  const Fn f{};
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * T;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * T + threadIdx.x; i < a.n;
       i += step) {
    std::int64_t rem = i, o0 = 0, o1 = 0, oo = 0;
    for (int d = a.rank - 1; d >= 0; --d) {
      const std::int64_t c = rem % a.shape[d];
      rem /= a.shape[d];
      o0 += c * a.stride0[d];
      o1 += c * a.stride1[d];
      oo += c * a.stride_out[d];
    }
    if constexpr (Fn::kInputs == 2)
      a.out[oo] = f(a.in0[o0], a.in1[o1]);
    else
      a.out[oo] = f(a.in0[o0]);
  }
}

}  // namespace kq::fused
