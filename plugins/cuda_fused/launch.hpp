// Launching the cuda_fused kernels from host code that sees no CUDA types: the kernel is named by
// op, element type (f32, f16, bf16) and shape, the stream is the caller's cudaStream_t as void*.
// Each launch is checked with cudaGetLastError and reported as a Status.
#pragma once
#include <cstdint>

#include "args.hpp"
#include "fused_ops.hpp"
#include "kq/status.hpp"

namespace kq::fused {

enum class Path : std::uint8_t { vector, scalar, strided };

// One compiled kernel: path, elements (16-byte vectors for vector) per input per thread in flight,
// block size, load and store policy. A structural type: it is also the template argument that
// instantiates the kernel.
struct KernelId {
  Path path = Path::vector;
  int per_thread = 1;
  int threads = 256;
  Load load = Load::nc;
  Store store = Store::cs;
  friend constexpr bool operator==(const KernelId&, const KernelId&) = default;
};

// Blocks of the kernel the current device holds at once (SMs x resident blocks per SM). Also
// loads the kernel's module (lazy loading), so call it from prepare(), outside timed regions.
Status resident_blocks(FusedOp op, DType t, const KernelId& k, int& blocks);

// Enqueues the kernel on `stream` with `blocks` blocks of k.threads threads. Only the kernels
// listed in variants.hpp (kKernels; in half, kHalfKernels) exist; any other id is an error.
Status launch_flat(FusedOp op, DType t, const KernelId& k, const FlatArgs& args,
                   std::int64_t blocks, void* stream);
Status launch_strided(FusedOp op, DType t, const KernelId& k, const StridedArgs& args,
                      std::int64_t blocks, void* stream);

}  // namespace kq::fused
