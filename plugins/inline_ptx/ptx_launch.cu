// The two kernel instances of the inline_ptx arm and their launches.
#include <cuda_runtime.h>

#include <string>

#include "cuda_status.hpp"
#include "ptx_kernels.cuh"
#include "ptx_launch.hpp"

namespace kq::ptx {
namespace {

const void* kernel(bool vector) {
  return vector ? reinterpret_cast<const void*>(&ptx_vector_kernel<kVectorsPerThread, kThreads>)
                : reinterpret_cast<const void*>(&ptx_scalar_kernel<kScalarsPerThread, kThreads>);
}

}  // namespace

Status resident_blocks(bool vector, int& blocks) {
  return cuda_plugin::resident_blocks(kernel(vector), kThreads, blocks);
}

Status launch(bool vector, const float* x, const float* r, float* out, std::int64_t n,
              std::int64_t blocks, void* stream) {
  if (blocks < 1 || blocks > 0x7fffffff)
    return Status::error("grid of " + std::to_string(blocks) + " blocks");
  void* params[] = {&x, &r, &out, &n};
  cudaError_t e = cudaLaunchKernel(kernel(vector), dim3(static_cast<unsigned>(blocks)),
                                   dim3(kThreads), params, 0, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) return cuda_plugin::cuda_status(e, "cudaLaunchKernel");
  return cuda_plugin::launched("after the launch");
}

}  // namespace kq::ptx
