#include <cuda_runtime.h>

#include <atomic>

#include "device/cuda_check.hpp"
#include "timing/blocking_kernel.hpp"
#include "timing/globaltimer.cuh"

namespace kq {
namespace {

__global__ void blocking_kernel(volatile int* flags, unsigned long long timeout_ns) {
  const unsigned long long t0 = globaltimer_ns();
  while (flags[0] == 0) {
    if (globaltimer_ns() - t0 > timeout_ns) {
      flags[1] = 1;
      break;
    }
  }
}

}  // namespace

BlockingKernel::BlockingKernel(double timeout_s)
    : timeout_ns_(static_cast<unsigned long long>(timeout_s * 1e9)) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
    cudaGetLastError();  // not sticky: the timer then runs without it
    return;
  }
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
    cudaGetLastError();
    cudaFreeHost(p);
    return;
  }
  flags_ = static_cast<volatile int*>(p);
  device_flags_ = static_cast<int*>(d);
  flags_[0] = 1;
  flags_[1] = 0;
}

BlockingKernel::~BlockingKernel() {
  if (flags_) cudaFreeHost(const_cast<int*>(flags_));
}

void BlockingKernel::block(void* stream) {
  flags_[0] = 0;
  flags_[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  blocking_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(device_flags_, timeout_ns_);
  cuda_check(cudaGetLastError(), "the blocking kernel");
}

void BlockingKernel::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flags_[0] = 1;
}

bool BlockingKernel::held() const { return flags_ != nullptr && flags_[1] == 0; }

}  // namespace kq
