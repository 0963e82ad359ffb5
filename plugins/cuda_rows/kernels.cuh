// The cuda_rows kernels: softmax, log_softmax, layer norm and RMS norm over the last dim of an
// (M, N) row-major matrix, one row per block, x and y of one element type T (float, __half,
// __nv_bfloat16), everything computed in float and each output rounded once.
//
// resident_kernel: the whole row in registers (VPT 16-byte vectors per thread, THREADS threads),
// read once from DRAM and written once: the memory-bound shape. Only where every row starts on a
// 16-byte boundary (x and y aligned, N * sizeof(T) a multiple of 16) and N fits. A block per row:
// on the H200 (tools/bench_cuda_rows.cu, bf16 softmax 32768 x 4096) it ran 143 us, the same
// kernel on a persistent grid 161 us, and a persistent grid copying each block's next row into
// shared memory (cp.async, 2 to 4 stages) 155 us; 256 threads of 2 vectors 157 us.
// looped_kernel: any N and alignment (16-byte vectors where allowed, elements otherwise): a pass
// per statistic over the row (each after the first mostly from L2), then one writing y. Sums are
// compensated (Kahan) per thread: a thread adds N / THREADS terms, 16384 for a row of 2^24.
// Softmax takes three passes, not an online max and sum: rescaling the running sum at every new
// maximum costs an ulp each time, and an ascending row rescales at every element.
//
// Element offsets are row * N + column in 64 bits (Index64): a matrix may hold more than 2^31
// elements. The index policy is a template argument only so that a known-broken candidate
// (plugins/broken/cuda_shaped) can share these kernels with 32-bit offsets.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "elem.cuh"
#include "row_args.hpp"

namespace kq::rows {

using fused::Elem;

// Where element `col` of row `row` is, in elements from the matrix's start.
struct Index64 {
  __device__ __forceinline__ static std::int64_t at(std::int64_t row, std::int64_t n,
                                                    std::int64_t col) {
    return row * n + col;
  }
};

// One element of a small tensor (w, b) of any float dtype, widened; the branch is uniform.
__device__ __forceinline__ float load_any(const void* p, ElemType t, std::int64_t i) {
  switch (t) {
    case DType::f16:
      return __half2float(__ldg(static_cast<const __half*>(p) + i));
    case DType::bf16:
      return __bfloat162float(__ldg(static_cast<const __nv_bfloat16*>(p) + i));
    default:
      return __ldg(static_cast<const float*>(p) + i);
  }
}

// `v` rounded once to the dtype `t` (mean and rstd, once per row).
__device__ __forceinline__ void store_any(void* p, ElemType t, std::int64_t i, float v) {
  switch (t) {
    case DType::f16:
      static_cast<__half*>(p)[i] = __float2half_rn(v);
      return;
    case DType::bf16:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
      return;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

// A 16-byte vector of T and its W floats.
template <class T>
struct Vec16 {
  using V = typename Elem<T>::Vec;
  static constexpr int W = Elem<T>::kPerVec;

  __device__ __forceinline__ static void unpack(const V& v, float (&f)[W]) {
    if constexpr (std::is_same_v<T, float>) {
      f[0] = v.x, f[1] = v.y, f[2] = v.z, f[3] = v.w;
    } else {
      const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float2 p;
        if constexpr (std::is_same_v<T, __half>) {
          __half2 h;
          std::memcpy(&h, &words[i], 4);
          p = __half22float2(h);
        } else {
          __nv_bfloat162 h;
          std::memcpy(&h, &words[i], 4);
          p = __bfloat1622float2(h);
        }
        f[2 * i] = p.x;
        f[2 * i + 1] = p.y;
      }
    }
  }

  __device__ __forceinline__ static V pack(const float (&f)[W]) {
    if constexpr (std::is_same_v<T, float>) {
      return make_float4(f[0], f[1], f[2], f[3]);
    } else {
      unsigned words[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if constexpr (std::is_same_v<T, __half>) {
          const __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
          std::memcpy(&words[i], &h, 4);
        } else {
          const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
          std::memcpy(&words[i], &h, 4);
        }
      }
      return make_uint4(words[0], words[1], words[2], words[3]);
    }
  }
};

// Vector j (W elements) of a per-column tensor: one 16-byte load where `vec`, else W of them.
template <class T>
__device__ __forceinline__ void load_columns(const void* p, ElemType t, bool vec, std::int64_t j,
                                             float (&f)[Vec16<T>::W]) {
  constexpr int W = Vec16<T>::W;
  if (vec) {
    Vec16<T>::unpack(__ldg(static_cast<const typename Vec16<T>::V*>(p) + j), f);
  } else {
#pragma unroll
    for (int i = 0; i < W; ++i) f[i] = load_any(p, t, j * W + i);
  }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The block's sum (or max) of one value per thread, the same bits in every thread: the xor
// butterfly gives every lane the same operands in the same order, and every warp reduces the
// same partials. smem holds at least THREADS / 32 floats.
template <int THREADS, bool MAX>
__device__ __forceinline__ float block_reduce(float v, float* smem) {
  v = MAX ? warp_max(v) : warp_sum(v);
  if constexpr (THREADS > 32) {
    constexpr int kWarps = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // every warp has read the previous reduction's partials
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < kWarps ? smem[lane] : (MAX ? -INFINITY : 0.0f);
    v = MAX ? warp_max(v) : warp_sum(v);
  }
  return v;
}

// A compensated (Kahan) running sum. nvcc keeps its operations as written: no fast math.
struct KahanSum {
  float s = 0, c = 0;
  __device__ __forceinline__ void add(float x) {
    const float y = x - c;
    const float t = s + y;
    c = (t - s) - y;
    s = t;
  }
  __device__ __forceinline__ float value() const { return s - c; }
};

// The row statistics every op's output needs, in float.
struct RowStats {
  float a = 0;  // softmax: the max; log_softmax: the max; norms: the mean (layer) or 0
  float b = 0;  // softmax: 1 / sum; log_softmax: log(sum); norms: rstd
};

// The output of element x (column col's w and b already widened) from the row's statistics.
template <RowOp OP>
__device__ __forceinline__ float row_output(float x, const RowStats& s, float w, float b) {
  if constexpr (OP == RowOp::softmax) return expf(x - s.a) * s.b;
  if constexpr (OP == RowOp::log_softmax) return (x - s.a) - s.b;
  if constexpr (OP == RowOp::layer_norm) return (x - s.a) * s.b * w + b;
  if constexpr (OP == RowOp::rms_norm) return x * s.b * w;
  return 0.0f;
}

// layer_norm's per-row outputs, written by one thread.
__device__ __forceinline__ void store_row_stats(const RowArgs& a, std::int64_t row, float mean,
                                                float rstd) {
  if (threadIdx.x != 0) return;
  if (a.mean) store_any(a.mean, a.mean_t, row, mean);
  if (a.rstd) store_any(a.rstd, a.rstd_t, row, rstd);
}

// The row stays in registers as loaded (16-byte vectors: 8 halves in 4 registers) and is
// widened at each use; softmax keeps exp(x - max) as floats instead, computed once. At least
// 1024 / THREADS blocks of it fit an SM (64 registers a thread at most): eight 128-thread blocks
// keep 64 KiB of a bf16 row's loads in flight per SM.
template <RowOp OP, class T, int THREADS, int VPT, class Ix = Index64>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS) resident_kernel(RowArgs a) {
  using V = typename Vec16<T>::V;
  constexpr int W = Vec16<T>::W;
  __shared__ float smem[32];
  const int nvec = static_cast<int>(a.n / W);  // the host checked n <= THREADS * VPT * W
  const int tid = static_cast<int>(threadIdx.x);
  auto owned = [&](int k) { return tid + k * THREADS < nvec; };
  for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    // Vector j of the row in x and in y.
    auto xv = [&](int j) {
      return reinterpret_cast<const V*>(static_cast<const T*>(a.x) +
                                        Ix::at(row, a.n, std::int64_t{j} * W));
    };
    auto yv = [&](int j) {
      return reinterpret_cast<V*>(static_cast<T*>(a.y) + Ix::at(row, a.n, std::int64_t{j} * W));
    };
    V raw[VPT];
#pragma unroll
    for (int k = 0; k < VPT; ++k) raw[k] = owned(k) ? __ldcs(xv(tid + k * THREADS)) : V{};
    RowStats st;
    float e[OP == RowOp::softmax ? VPT : 1][W];  // softmax: exp(x - max), kept for y
    if constexpr (OP == RowOp::softmax || OP == RowOp::log_softmax) {
      float m = -INFINITY;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        if (!owned(k)) continue;
        float f[W];
        Vec16<T>::unpack(raw[k], f);
#pragma unroll
        for (int i = 0; i < W; ++i) m = fmaxf(m, f[i]);
      }
      st.a = block_reduce<THREADS, true>(m, smem);
      float s = 0;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        if (!owned(k)) continue;
        float f[W];
        Vec16<T>::unpack(raw[k], f);
#pragma unroll
        for (int i = 0; i < W; ++i) {
          const float x = expf(f[i] - st.a);
          if constexpr (OP == RowOp::softmax) e[k][i] = x;
          s += x;
        }
      }
      s = block_reduce<THREADS, false>(s, smem);
      st.b = OP == RowOp::softmax ? 1.0f / s : logf(s);
    } else if constexpr (OP == RowOp::layer_norm) {
      float s = 0;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        if (!owned(k)) continue;
        float f[W];
        Vec16<T>::unpack(raw[k], f);
#pragma unroll
        for (int i = 0; i < W; ++i) s += f[i];
      }
      st.a = block_reduce<THREADS, false>(s, smem) * a.inv_n;
      float q = 0;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        if (!owned(k)) continue;
        float f[W];
        Vec16<T>::unpack(raw[k], f);
#pragma unroll
        for (int i = 0; i < W; ++i) {
          const float d = f[i] - st.a;
          q += d * d;
        }
      }
      const float var = block_reduce<THREADS, false>(q, smem) * a.inv_n;
      st.b = 1.0f / sqrtf(var + a.eps);
      store_row_stats(a, row, st.a, st.b);
    } else {
      float q = 0;
#pragma unroll
      for (int k = 0; k < VPT; ++k) {
        if (!owned(k)) continue;
        float f[W];
        Vec16<T>::unpack(raw[k], f);
#pragma unroll
        for (int i = 0; i < W; ++i) q += f[i] * f[i];
      }
      st.b = 1.0f / sqrtf(block_reduce<THREADS, false>(q, smem) * a.inv_n + a.eps);
    }
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
      if (!owned(k)) continue;
      const int j = tid + k * THREADS;
      float f[W], w[W], b[W], out[W];
      if constexpr (OP == RowOp::softmax) {
#pragma unroll
        for (int i = 0; i < W; ++i) out[i] = e[k][i] * st.b;
      } else {
        Vec16<T>::unpack(raw[k], f);
        // w and b as 16-byte vectors of T: the host takes this kernel only where they are.
        if constexpr (OP == RowOp::layer_norm || OP == RowOp::rms_norm)
          Vec16<T>::unpack(__ldg(static_cast<const V*>(a.w) + j), w);
        if constexpr (OP == RowOp::layer_norm)
          Vec16<T>::unpack(__ldg(static_cast<const V*>(a.b) + j), b);
#pragma unroll
        for (int i = 0; i < W; ++i) {
          if constexpr (OP == RowOp::layer_norm)
            out[i] = row_output<OP>(f[i], st, w[i], b[i]);
          else if constexpr (OP == RowOp::rms_norm)
            out[i] = row_output<OP>(f[i], st, w[i], 0.0f);
          else
            out[i] = row_output<OP>(f[i], st, 0.0f, 0.0f);
        }
      }
      __stcs(yv(j), Vec16<T>::pack(out));
    }
  }
}

// A unit of the looped kernel: a 16-byte vector (VEC) or one element.
template <class T, bool VEC>
struct Unit {
  static constexpr int W = VEC ? Vec16<T>::W : 1;
  // The unit at element e of x (a multiple of W).
  __device__ __forceinline__ static void load(const T* x, std::int64_t e, float (&f)[W]) {
    if constexpr (VEC) {
      float g[Vec16<T>::W];
      Vec16<T>::unpack(__ldg(reinterpret_cast<const typename Vec16<T>::V*>(x + e)), g);
#pragma unroll
      for (int i = 0; i < W; ++i) f[i] = g[i];
    } else {
      f[0] = Elem<T>::widen(x[e]);
    }
  }
  __device__ __forceinline__ static void store(T* y, std::int64_t e, const float (&f)[W]) {
    if constexpr (VEC) {
      float g[Vec16<T>::W];
#pragma unroll
      for (int i = 0; i < W; ++i) g[i] = f[i];
      __stcs(reinterpret_cast<typename Vec16<T>::V*>(y + e), Vec16<T>::pack(g));
    } else {
      y[e] = Elem<T>::round(f[0]);
    }
  }
  // Column c's element of a per-column tensor.
  __device__ __forceinline__ static void columns(const void* p, ElemType t, bool vec,
                                                 std::int64_t j, float (&f)[W]) {
    if constexpr (VEC) {
      float g[Vec16<T>::W];
      load_columns<T>(p, t, vec, j, g);
#pragma unroll
      for (int i = 0; i < W; ++i) f[i] = g[i];
    } else {
      f[0] = load_any(p, t, j);
    }
  }
};

// Two blocks an SM at least (64 registers a thread): layer norm's f32 vectors took 112.
template <RowOp OP, class T, int THREADS, bool VEC, class Ix = Index64>
__global__ void __launch_bounds__(THREADS, 2) looped_kernel(RowArgs a) {
  using U = Unit<T, VEC>;
  constexpr int W = U::W;
  __shared__ float smem[32];
  const std::int64_t units = a.n / W;  // VEC: the host checked n % W == 0
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  // Every unit of row `row` this thread owns: fn(unit, its W floats).
  auto each = [&](std::int64_t row, auto&& fn) {
#pragma unroll 4
    for (std::int64_t j = threadIdx.x; j < units; j += THREADS) {
      float f[W];
      U::load(x, Ix::at(row, a.n, j * W), f);
      fn(j, f);
    }
  };
  for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    RowStats st;
    if constexpr (OP == RowOp::softmax || OP == RowOp::log_softmax) {
      float m = -INFINITY;
      each(row, [&](std::int64_t, const float(&f)[W]) {
#pragma unroll
        for (int i = 0; i < W; ++i) m = fmaxf(m, f[i]);
      });
      st.a = block_reduce<THREADS, true>(m, smem);
      KahanSum s;
      each(row, [&](std::int64_t, const float(&f)[W]) {
#pragma unroll
        for (int i = 0; i < W; ++i) s.add(expf(f[i] - st.a));
      });
      const float sum = block_reduce<THREADS, false>(s.value(), smem);
      st.b = OP == RowOp::softmax ? 1.0f / sum : logf(sum);
    } else if constexpr (OP == RowOp::layer_norm) {
      KahanSum s;
      each(row, [&](std::int64_t, const float(&f)[W]) {
#pragma unroll
        for (int i = 0; i < W; ++i) s.add(f[i]);
      });
      st.a = block_reduce<THREADS, false>(s.value(), smem) * a.inv_n;
      KahanSum q;
      each(row, [&](std::int64_t, const float(&f)[W]) {
#pragma unroll
        for (int i = 0; i < W; ++i) {
          const float d = f[i] - st.a;
          q.add(d * d);
        }
      });
      const float var = block_reduce<THREADS, false>(q.value(), smem) * a.inv_n;
      st.b = 1.0f / sqrtf(var + a.eps);
      store_row_stats(a, row, st.a, st.b);
    } else {
      KahanSum q;
      each(row, [&](std::int64_t, const float(&f)[W]) {
#pragma unroll
        for (int i = 0; i < W; ++i) q.add(f[i] * f[i]);
      });
      st.b = 1.0f / sqrtf(block_reduce<THREADS, false>(q.value(), smem) * a.inv_n + a.eps);
    }
    each(row, [&](std::int64_t j, const float(&f)[W]) {
      float w[W] = {}, b[W] = {}, out[W];
      if constexpr (OP == RowOp::layer_norm || OP == RowOp::rms_norm)
        U::columns(a.w, a.wt, a.w_vec, j, w);
      if constexpr (OP == RowOp::layer_norm) U::columns(a.b, a.bt, a.b_vec, j, b);
#pragma unroll
      for (int i = 0; i < W; ++i) out[i] = row_output<OP>(f[i], st, w[i], b[i]);
      U::store(y, Ix::at(row, a.n, j * W), out);
    });
  }
}

}  // namespace kq::rows
