// Choosing and launching a cuda_rows kernel from host code that sees no CUDA types: the choice
// is plain data (which kernel shape fits the row and the pointers), the stream the caller's
// cudaStream_t as void*. Every launch is checked (cudaGetLastError) and reported as a Status.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "kq/status.hpp"
#include "row_args.hpp"

namespace kq::rows {

// The register-resident shapes, smallest first: (threads per block, 16-byte vectors per
// thread). A row of n elements takes the first whose threads * vectors * (16 / element size)
// covers it: up to 4096 f32 or 8192 halves with 128-thread blocks, 16384 f32 and 32768 halves
// at most. Four vectors a thread (16 floats, 32 for halves) keep a row in flight per block
// without spilling.
struct ResidentShape {
  int threads, vectors;
};
inline constexpr std::array<ResidentShape, 6> kResident = {
    {{128, 1}, {128, 2}, {128, 4}, {256, 4}, {512, 4}, {1024, 4}}};
inline constexpr int kLoopThreads = 512;

struct KernelChoice {
  int resident = -1;  // an index into kResident, or -1: looped_kernel
  bool vec = false;   // 16-byte vectors (every row starts on a 16-byte boundary)
  int threads = kLoopThreads;
};

// The kernel for `a` (x and y of `elem_size` bytes an element).
inline KernelChoice choose_kernel(const RowArgs& a, std::int64_t elem_size) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  KernelChoice k;
  k.vec = aligned(a.x) && aligned(a.y) && (a.n * elem_size) % 16 == 0;
  // The resident kernel reads w and b as vectors of x's type too (per-element loads of other
  // types would double its registers).
  const bool columns = (a.w == nullptr || a.w_vec) && (a.b == nullptr || a.b_vec);
  if (!k.vec || !columns) return k;
  const std::int64_t per_vec = 16 / elem_size;
  for (std::size_t i = 0; i < kResident.size(); ++i) {
    if (a.n <= std::int64_t{kResident[i].threads} * kResident[i].vectors * per_vec) {
      k.resident = static_cast<int>(i);
      k.threads = kResident[i].threads;
      return k;
    }
  }
  return k;
}

inline std::string describe(const KernelChoice& k) {
  if (k.resident >= 0)
    return "resident_kernel<" + std::to_string(kResident[k.resident].threads) + " threads, " +
           std::to_string(kResident[k.resident].vectors) + " vectors of 16 bytes a thread>";
  return std::string("looped_kernel<") + std::to_string(k.threads) + " threads, " +
         (k.vec ? "16-byte vectors" : "one element a load") + ">";
}

// A family of compiled kernels: the real ones (64-bit row offsets, rows.cu), or a known-broken
// candidate's (plugins/broken/cuda_shaped).
struct Launcher {
  // Enqueues the kernel `k` of `op` for x's element type `a.t` on `stream`.
  Status (*launch)(RowOp op, const RowArgs& a, const KernelChoice& k, void* stream);
  // Loads that kernel's module (lazy loading) outside timed regions: call from prepare().
  Status (*load)(RowOp op, DType t, const KernelChoice& k);
};

// The cuda_rows kernels (rows.cu).
Launcher rows_launcher();

}  // namespace kq::rows
