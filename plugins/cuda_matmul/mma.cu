// cuda_matmul's kernel: C = epilogue(A B) for f16 and bf16 operands accumulating in f32, on the
// tensor cores through mma.sync (m16n8k16; sm_80 and later, so Hopper runs it without wgmma's
// asynchronous warpgroups: a plain, readable kernel, not cuBLAS's).
//
// A block computes a 128 x 128 tile of C with 8 warps (2 x 4, each 64 x 32: 4 x 4 mma tiles),
// stepping K by 32 through a 3-stage shared-memory ring. Where every row of A and B starts on a
// 16-byte boundary and holds whole 16-byte vectors, the ring is filled by cp.async (16 bytes,
// zero-filled beyond M, N and K); otherwise by element loads, the same tiles. Fragments come from
// shared memory by ldmatrix (B transposed on the way where it is staged n-major); rows are
// padded by 8 elements, which spreads ldmatrix's eight 16-byte rows over all 32 banks. The
// epilogue adds the bias and applies gelu (erf) to the f32 sum, then rounds once into C.
// Offsets are 64-bit; grids too large for one launch are split into several.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda_status.hpp"
#include "mma.hpp"

namespace kq::mma {
namespace {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3, THREADS = 256;
constexpr int PAD = 8;
constexpr int A_LD = BK + PAD;   // A staged [BM][A_LD], k contiguous
constexpr int BK_LD = BK + PAD;  // B staged k-major: [BN][BK_LD]
constexpr int BN_LD = BN + PAD;  // B staged n-major: [BK][BN_LD]
constexpr int A_STAGE = BM * A_LD;

template <bool KMajor>
__host__ __device__ constexpr int b_stage() {
  return KMajor ? BN * BK_LD : BK * BN_LD;
}
template <bool KMajor>
__host__ __device__ constexpr int smem_bytes() {
  return STAGES * (A_STAGE + b_stage<KMajor>()) * 2;
}

template <typename T>
__device__ __forceinline__ float to_float(T x);
template <>
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <>
__device__ __forceinline__ float to_float(__half x) {
  return __half2float(x);
}
template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float(float x) {
  return __float2half_rn(x);
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory; src_bytes 0 fills them with zeros.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a b for one 16 x 8 x 16 tile, f32 accumulators.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const std::uint32_t (&a)[4],
                                         const std::uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The problem as the kernel reads it: typed pointers already at this launch's first row and
// matrix.
template <typename T>
struct Params {
  const T* a;
  const T* b;
  const T* bias;
  T* c;
  std::int64_t M, N, K, bias_s;
  Strides sa, sb, sc;
  bool gelu;
};

// Stage `s` of the ring <- the A and B tiles at k0.
template <typename T, bool Vec, bool KMajor>
__device__ __forceinline__ void load_tiles(const Params<T>& p, T* as, T* bs, std::int64_t m0,
                                           std::int64_t n0, std::int64_t k0, int tid) {
  if constexpr (Vec) {
    // A: 128 rows of 4 vectors; B k-major the same, n-major 32 rows (k) of 16 vectors.
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int v = tid + i * THREADS;
      const int row = v / 4, kc = (v % 4) * 8;
      const std::int64_t m = m0 + row, k = k0 + kc;
      const bool in = m < p.M && k < p.K;
      cp_async16(as + row * A_LD + kc, in ? p.a + m * p.sa.rs + k : p.a, in ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int v = tid + i * THREADS;
      if constexpr (KMajor) {
        const int row = v / 4, kc = (v % 4) * 8;
        const std::int64_t n = n0 + row, k = k0 + kc;
        const bool in = n < p.N && k < p.K;
        cp_async16(bs + row * BK_LD + kc, in ? p.b + n * p.sb.cs + k : p.b, in ? 16 : 0);
      } else {
        const int row = v / 16, nc = (v % 16) * 8;
        const std::int64_t k = k0 + row, n = n0 + nc;
        const bool in = k < p.K && n < p.N;
        cp_async16(bs + row * BN_LD + nc, in ? p.b + k * p.sb.rs + n : p.b, in ? 16 : 0);
      }
    }
  } else {
    const T zero = from_float<T>(0.0f);
#pragma unroll 4
    for (int i = 0; i < BM * BK / THREADS; ++i) {
      const int e = tid + i * THREADS;
      const int row = e / BK, kk = e % BK;
      const std::int64_t m = m0 + row, k = k0 + kk;
      as[row * A_LD + kk] = m < p.M && k < p.K ? p.a[m * p.sa.rs + k * p.sa.cs] : zero;
    }
#pragma unroll 4
    for (int i = 0; i < BN * BK / THREADS; ++i) {
      const int e = tid + i * THREADS;
      if constexpr (KMajor) {
        const int row = e / BK, kk = e % BK;
        const std::int64_t n = n0 + row, k = k0 + kk;
        bs[row * BK_LD + kk] = n < p.N && k < p.K ? p.b[k * p.sb.rs + n * p.sb.cs] : zero;
      } else {
        const int row = e / BN, nn = e % BN;
        const std::int64_t k = k0 + row, n = n0 + nn;
        bs[row * BN_LD + nn] = k < p.K && n < p.N ? p.b[k * p.sb.rs + n * p.sb.cs] : zero;
      }
    }
  }
}

template <typename T, bool Vec, bool KMajor>
__global__ void __launch_bounds__(THREADS) mma_kernel(Params<T> p) {
  extern __shared__ uint4 smem[];
  T* const as_ring = reinterpret_cast<T*>(smem);
  T* const bs_ring = as_ring + STAGES * A_STAGE;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / 4, warp_n = warp % 4;
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * BM;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * BN;
  const std::int64_t z = blockIdx.z;
  p.a += z * p.sa.bs;
  p.b += z * p.sb.bs;
  p.c += z * p.sc.bs;

  float acc[4][4][4] = {};
  const std::int64_t tiles = (p.K + BK - 1) / BK;
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles)
      load_tiles<T, Vec, KMajor>(p, as_ring + s * A_STAGE, bs_ring + s * b_stage<KMajor>(), m0, n0,
                                 s * BK, tid);
    cp_async_commit();
  }
  for (std::int64_t t = 0; t < tiles; ++t) {
    // Tile t has landed; every warp is done with the stage the prefetch below overwrites.
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const std::int64_t next = t + STAGES - 1;
    if (next < tiles) {
      const int s = static_cast<int>(next % STAGES);
      load_tiles<T, Vec, KMajor>(p, as_ring + s * A_STAGE, bs_ring + s * b_stage<KMajor>(), m0, n0,
                                 next * BK, tid);
    }
    cp_async_commit();
    const int s = static_cast<int>(t % STAGES);
    const T* as = as_ring + s * A_STAGE;
    const T* bs = bs_ring + s * b_stage<KMajor>();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      std::uint32_t af[4][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int row = warp_m * 64 + mi * 16 + lane % 16, col = kk * 16 + (lane / 16) * 8;
        ldmatrix_x4(af[mi], as + row * A_LD + col);
      }
#pragma unroll
      for (int jp = 0; jp < 2; ++jp) {
        std::uint32_t r[4];
        if constexpr (KMajor) {
          const int n = warp_n * 32 + jp * 16 + lane % 8 + (lane / 16) * 8;
          const int k = kk * 16 + ((lane / 8) % 2) * 8;
          ldmatrix_x4(r, bs + n * BK_LD + k);
        } else {
          const int k = kk * 16 + lane % 8 + ((lane / 8) % 2) * 8;
          const int n = warp_n * 32 + jp * 16 + (lane / 16) * 8;
          ldmatrix_x4_trans(r, bs + k * BN_LD + n);
        }
        bf[2 * jp][0] = r[0];
        bf[2 * jp][1] = r[1];
        bf[2 * jp + 1][0] = r[2];
        bf[2 * jp + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int nj = 0; nj < 4; ++nj) mma16816<T>(acc[mi][nj], af[mi], bf[nj]);
    }
  }
  cp_async_wait<0>();

  // Thread (g, c) of a warp holds rows g and g + 8, columns 2c and 2c + 1 of each 16 x 8 tile.
  const int g = lane / 4, c2 = (lane % 4) * 2;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int nj = 0; nj < 4; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t m = m0 + warp_m * 64 + mi * 16 + g + (e / 2) * 8;
        const std::int64_t n = n0 + warp_n * 32 + nj * 8 + c2 + e % 2;
        if (m >= p.M || n >= p.N) continue;
        float v = acc[mi][nj][e];
        if (p.bias) v += to_float(p.bias[n * p.bias_s]);
        if (p.gelu) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        p.c[m * p.sc.rs + n * p.sc.cs] = from_float<T>(v);
      }
}

template <typename T, bool Vec, bool KMajor>
Status set_smem() {
  return cuda_plugin::cuda_status(
      cudaFuncSetAttribute(mma_kernel<T, Vec, KMajor>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           smem_bytes<KMajor>()),
      "cudaFuncSetAttribute (shared memory)");
}

// Launches over the whole problem: a grid's y and z are at most 65535, so the rows and the batch
// go in chunks, each launch starting at its own row and matrix.
template <typename T, bool Vec, bool KMajor>
Status launch_typed(const MmaArgs& a, cudaStream_t stream) {
  constexpr std::int64_t kMaxGrid = 65535;
  const std::int64_t row_tiles = (a.M + BM - 1) / BM;
  const auto col_tiles = static_cast<unsigned>((a.N + BN - 1) / BN);
  for (std::int64_t z0 = 0; z0 < a.batch; z0 += kMaxGrid)
    for (std::int64_t t0 = 0; t0 < row_tiles; t0 += kMaxGrid) {
      const std::int64_t rows = t0 * BM, zs = a.batch - z0 < kMaxGrid ? a.batch - z0 : kMaxGrid;
      const std::int64_t ts = row_tiles - t0 < kMaxGrid ? row_tiles - t0 : kMaxGrid;
      Params<T> p;
      p.a = static_cast<const T*>(a.a) + z0 * a.sa.bs + rows * a.sa.rs;
      p.b = static_cast<const T*>(a.b) + z0 * a.sb.bs;
      p.bias = static_cast<const T*>(a.bias);
      p.c = static_cast<T*>(a.c) + z0 * a.sc.bs + rows * a.sc.rs;
      p.M = a.M - rows;
      p.N = a.N;
      p.K = a.K;
      p.bias_s = a.bias_s;
      p.sa = a.sa;
      p.sb = a.sb;
      p.sc = a.sc;
      p.gelu = a.gelu;
      const dim3 grid(col_tiles, static_cast<unsigned>(ts), static_cast<unsigned>(zs));
      mma_kernel<T, Vec, KMajor><<<grid, THREADS, smem_bytes<KMajor>(), stream>>>(p);
      if (Status s = cuda_plugin::launched("mma_kernel"); !s.is_ok()) return s;
    }
  return Status::ok();
}

template <typename T>
Status launch_for(const MmaArgs& a, const MmaChoice& c, cudaStream_t s) {
  if (c.vec)
    return c.b_k_major ? launch_typed<T, true, true>(a, s) : launch_typed<T, true, false>(a, s);
  return c.b_k_major ? launch_typed<T, false, true>(a, s) : launch_typed<T, false, false>(a, s);
}

template <typename T>
Status set_all() {
  for (Status s : {set_smem<T, true, true>(), set_smem<T, true, false>(),
                   set_smem<T, false, true>(), set_smem<T, false, false>()})
    if (!s.is_ok()) return s;
  return Status::ok();
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

MmaChoice choose(const MmaArgs& a) {
  MmaChoice c;
  c.b_k_major = a.sb.cs != 1;  // B's unit stride along n: staged n-major
  // Whole 16-byte vectors: unit stride along the staged rows, rows and matrices starting on
  // 16-byte boundaries, and the row's extent a multiple of 8 (no vector straddles its end).
  const auto rows_ok = [](std::int64_t rs, std::int64_t bs, std::int64_t extent) {
    return rs % 8 == 0 && bs % 8 == 0 && extent % 8 == 0;
  };
  const bool a_ok = a.sa.cs == 1 && rows_ok(a.sa.rs, a.sa.bs, a.K);
  const bool b_ok =
      c.b_k_major ? a.sb.rs == 1 && rows_ok(a.sb.cs, a.sb.bs, a.K) : rows_ok(a.sb.rs, a.sb.bs, a.N);
  c.vec = a_ok && b_ok && aligned16(a.a) && aligned16(a.b);
  return c;
}

Status prepare_kernels() {
  static const Status s = [] {
    Status b = set_all<__nv_bfloat16>();
    return b.is_ok() ? set_all<__half>() : b;
  }();
  return s;
}

Status launch(const MmaArgs& a, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const MmaChoice c = choose(a);
  return a.bf16 ? launch_for<__nv_bfloat16>(a, c, s) : launch_for<__half>(a, c, s);
}

std::string describe_kernels() {
  return "mma.sync m16n8k16 (f16/bf16 in, f32 accumulators); block tile " + std::to_string(BM) +
         " x " + std::to_string(BN) + " x " + std::to_string(BK) + ", " +
         std::to_string(THREADS / 32) + " warps of 64 x 32, " + std::to_string(STAGES) +
         "-stage shared-memory ring (" + std::to_string(smem_bytes<true>()) +
         " bytes with B k-major, " + std::to_string(smem_bytes<false>()) +
         " n-major); epilogue: + bias, gelu (erff), one rounding";
}

std::string describe(const MmaChoice& c) {
  return std::string(c.vec ? "cp.async 16-byte loads" : "element loads") + ", B staged " +
         (c.b_k_major ? "k-major" : "n-major");
}

}  // namespace kq::mma
