// Launching the inline-PTX residual_relu kernels from host code that sees no CUDA types.
#pragma once
#include <cstdint>

#include "kq/status.hpp"

namespace kq::ptx {

// Measured best for the float4 path (ptx_access.cuh): 1024-thread blocks, one float4 per input
// per thread, one pass (a block per 1024 float4).
inline constexpr int kThreads = 1024;
inline constexpr int kVectorsPerThread = 1;  // float4 of each input in flight per thread
inline constexpr int kScalarsPerThread = 4;  // floats of each input in flight, scalar path

// Blocks of the vector (or scalar) kernel the current device holds at once; loads the module.
Status resident_blocks(bool vector, int& blocks);

// Enqueues relu(x + r) over n elements on `stream`: the float4 kernel when `vector` (all three
// pointers 16-byte aligned), else the scalar one.
Status launch(bool vector, const float* x, const float* r, float* out, std::int64_t n,
              std::int64_t blocks, void* stream);

}  // namespace kq::ptx
