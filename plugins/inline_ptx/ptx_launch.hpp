// Launching the inline-PTX residual_relu kernels from host code that sees no CUDA types.
#pragma once
#include <cstdint>

#include "kq/status.hpp"
#include "kq/tensor.hpp"

namespace kq::ptx {

// Measured best for the float4 path (ptx_access.cuh): 1024-thread blocks, one float4 per input
// per thread, one pass (a block per 1024 float4).
inline constexpr int kThreads = 1024;
inline constexpr int kVectorsPerThread = 1;  // 16-byte vectors of each input in flight per thread
inline constexpr int kScalarsPerThread = 4;  // elements of each input in flight, scalar path

// Blocks of the vector (or scalar) kernel for dtype t (f32, f16, bf16) the current device holds
// at once; loads the module.
Status resident_blocks(DType t, bool vector, int& blocks);

// Enqueues relu(x + r) over n elements of dtype t on `stream`: the 16-byte vector kernel when
// `vector` (all three pointers 16-byte aligned), else the scalar one.
Status launch(DType t, bool vector, const void* x, const void* r, void* out, std::int64_t n,
              std::int64_t blocks, void* stream);

}  // namespace kq::ptx
