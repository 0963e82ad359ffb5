// The two kernel instances of the inline_ptx arm and their launches.
#include <cuda_runtime.h>

#include <string>

#include "ptx_kernels.cuh"
#include "ptx_launch.hpp"

namespace kq::ptx {
namespace {

const void* kernel(bool vector) {
  return vector ? reinterpret_cast<const void*>(&ptx_vector_kernel<kVectorsPerThread, kThreads>)
                : reinterpret_cast<const void*>(&ptx_scalar_kernel<kScalarsPerThread, kThreads>);
}

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::error(std::string(what) + ": " + cudaGetErrorName(e) + ": " +
                       cudaGetErrorString(e));
}

}  // namespace

Status resident_blocks(bool vector, int& blocks) {
  int dev = 0, sms = 0, per_sm = 0;
  if (Status s = cuda_status(cudaGetDevice(&dev), "cudaGetDevice"); !s.is_ok()) return s;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                             "cudaDeviceGetAttribute");
      !s.is_ok())
    return s;
  if (Status s = cuda_status(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel(vector), kThreads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      !s.is_ok())
    return s;
  blocks = sms * (per_sm > 0 ? per_sm : 1);
  return Status::ok();
}

Status launch(bool vector, const float* x, const float* r, float* out, std::int64_t n,
              std::int64_t blocks, void* stream) {
  if (blocks < 1 || blocks > 0x7fffffff)
    return Status::error("grid of " + std::to_string(blocks) + " blocks");
  void* params[] = {&x, &r, &out, &n};
  cudaError_t e = cudaLaunchKernel(kernel(vector), dim3(static_cast<unsigned>(blocks)),
                                   dim3(kThreads), params, 0, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) return cuda_status(e, "cudaLaunchKernel");
  return cuda_status(cudaGetLastError(), "after the launch");
}

}  // namespace kq::ptx
