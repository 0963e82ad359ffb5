// The kernel instances of the inline_ptx arm (vector and scalar, in f32, f16 and bf16) and their
// launches.
#include <cuda_runtime.h>

#include <string>

#include "cuda_status.hpp"
#include "elem.cuh"
#include "ptx_kernels.cuh"
#include "ptx_launch.hpp"

namespace kq::ptx {
namespace {

const void* kernel(DType t, bool vector) {
  return fused::with_elem(t, [&]<class E>(E*) {
    return vector
               ? reinterpret_cast<const void*>(&ptx_vector_kernel<E, kVectorsPerThread, kThreads>)
               : reinterpret_cast<const void*>(&ptx_scalar_kernel<E, kScalarsPerThread, kThreads>);
  });
}

}  // namespace

Status resident_blocks(DType t, bool vector, int& blocks) {
  return cuda_plugin::resident_blocks(kernel(t, vector), kThreads, blocks);
}

Status launch(DType t, bool vector, const void* x, const void* r, void* out, std::int64_t n,
              std::int64_t blocks, void* stream) {
  if (blocks < 1 || blocks > 0x7fffffff)
    return Status::error("grid of " + std::to_string(blocks) + " blocks");
  void* params[] = {&x, &r, &out, &n};
  cudaError_t e = cudaLaunchKernel(kernel(t, vector), dim3(static_cast<unsigned>(blocks)),
                                   dim3(kThreads), params, 0, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) return cuda_plugin::cuda_status(e, "cudaLaunchKernel");
  return cuda_plugin::launched("after the launch");
}

}  // namespace kq::ptx
