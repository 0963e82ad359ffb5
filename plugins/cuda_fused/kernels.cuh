// The elementwise kernels of the cuda_fused arms, templated on the op's formula (fused_math.cuh),
// the element type E (float, __half or __nv_bfloat16: elem.cuh widens each load to float and
// rounds each result once, to nearest even) and the launch shape. Three paths:
//   vector_kernel:  16-byte loads and stores (float4, or uint4 of four half pairs), U vectors per
//                   input per thread in flight; used when every pointer has the same offset from
//                   16 bytes (a head of fewer than 16 bytes is done in scalar first, the tail of
//                   fewer than one vector after); chunks of U*T vectors per block. The arms
//                   launch one block per chunk (one pass); the loop covers a capped grid.
//   scalar_kernel:  one element per access, still coalesced (consecutive threads, consecutive
//                   elements), U per thread in flight; pointers with different offsets.
//   strided_kernel: any rank <= 8 and any strides (specs whose layouts admit strided views).
// Indices are 64-bit throughout. Nothing here is __restrict__: an output may be an input (in
// place, where the spec allows it); every element is read before the same thread writes it.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "args.hpp"
#include "elem.cuh"
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

// One element i of a flat problem: loaded, widened, computed in float, rounded once.
template <class Fn, class E, Load L>
__device__ __forceinline__ E apply1(const Fn& f, const FlatArgs& a, std::int64_t i) {
  using X = Elem<E>;
  const float x = X::widen(load<L>(static_cast<const E*>(a.in0) + i));
  if constexpr (Fn::kInputs == 2)
    return X::round(f(x, X::widen(load<L>(static_cast<const E*>(a.in1) + i))));
  else
    return X::round(f(x));
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

// One thread's share of a chunk of vectors V: base + k * T for k < U, all U of each input
// loaded (into xv and yv; yv is xv again for a one-input op) before the first is used. Bounded
// (the last, partial chunk): only those below nvec. xv and yv are the kernel's, declared in its
// loop: so vector_kernel compiles to the PTX it had when it wrote both loops out itself.
template <class E, int T, Load L, Store S, bool Bounded, class Fn, int U, class V>
__device__ __forceinline__ void vector_chunk(const Fn& f, const V* x4, const V* y4, V* o4,
                                             std::int64_t base, std::int64_t nvec, V (&xv)[U],
                                             V (&yv)[U]) {
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
    if (!Bounded || base + k * T < nvec)
      store<S>(o4 + base + k * T, Elem<E>::apply(f, xv[k], yv[k]));
}

template <class Fn, class E, int U, int T, Load L, Store S>
__global__ void __launch_bounds__(T, (kMinBlocks<U, T>)) vector_kernel(FlatArgs a) {
  using V = typename Elem<E>::Vec;
  constexpr int W = Elem<E>::kPerVec;
  const Fn f{};
  const auto* in0 = static_cast<const E*>(a.in0);
  const auto* in1 = static_cast<const E*>(a.in1);  // unused if one input
  auto* out = static_cast<E*>(a.out);
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * T + threadIdx.x;
  if (tid < a.head) store<S>(out + tid, apply1<Fn, E, L>(f, a, tid));

  const std::int64_t nvec = (a.n - a.head) / W;
  const auto* x4 = reinterpret_cast<const V*>(in0 + a.head);
  const auto* y4 = reinterpret_cast<const V*>(in1 + a.head);
  auto* o4 = reinterpret_cast<V*>(out + a.head);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t base = blockIdx.x * kChunk + threadIdx.x; base < nvec; base += stride) {
    V xv[U], yv[U];
    if (base - threadIdx.x + kChunk <= nvec)  // a full chunk: no bounds checks
      vector_chunk<E, T, L, S, false>(f, x4, y4, o4, base, nvec, xv, yv);
    else
      vector_chunk<E, T, L, S, true>(f, x4, y4, o4, base, nvec, xv, yv);
  }

  const std::int64_t tail = a.head + nvec * W;  // the last (n - head) % W elements
  if (tid < a.n - tail) store<S>(out + tail + tid, apply1<Fn, E, L>(f, a, tail + tid));
}

// Coalesced scalar path: U elements per input per thread in flight, T apart.
template <class Fn, class E, int U, int T, Load L, Store S>
__global__ void __launch_bounds__(T) scalar_kernel(FlatArgs a) {
  const Fn f{};
  auto* out = static_cast<E*>(a.out);
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(U) * T;
  const std::int64_t stride = kChunk * gridDim.x;
  for (std::int64_t base = blockIdx.x * kChunk + threadIdx.x; base < a.n; base += stride) {
    E v[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (base + k * T < a.n) v[k] = apply1<Fn, E, L>(f, a, base + k * T);
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (base + k * T < a.n) store<S>(out + base + k * T, v[k]);
  }
}

template <class Fn, class E, int T>
__global__ void __launch_bounds__(T) strided_kernel(StridedArgs a) {
  using X = Elem<E>;
  const Fn f{};
  const auto* in0 = static_cast<const E*>(a.in0);
  const auto* in1 = static_cast<const E*>(a.in1);
  auto* out = static_cast<E*>(a.out);
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
      out[oo] = X::round(f(X::widen(in0[o0]), X::widen(in1[o1])));
    else
      out[oo] = X::round(f(X::widen(in0[o0])));
  }
}

}  // namespace kq::fused
