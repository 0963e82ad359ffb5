#include <cuda_runtime.h>

#include "device/cuda_check.hpp"
#include "timing/clock_probe.hpp"
#include "timing/globaltimer.cuh"
#include "timing/light.hpp"

namespace kq {
namespace {

// Spins about 20 us so the coarse global timer's ticks are small against the interval.
__global__ void clock_probe_kernel(unsigned long long* out) {
  const unsigned long long t0 = globaltimer_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  while (t1 - t0 < 20000) t1 = globaltimer_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

// The launch floor's kernel (timing/light.hpp): one block that does nothing.
__global__ void empty_kernel() {}

}  // namespace

void launch_empty_kernel(void* stream) {
  empty_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>();
  cuda_check(cudaGetLastError(), "the launch floor's empty kernel");
}

ClockProbe::ClockProbe() {
  void* p = nullptr;
  if (cudaHostAlloc(&p, 2 * sizeof(unsigned long long), cudaHostAllocMapped) == cudaSuccess)
    host_ = static_cast<unsigned long long*>(p);
  else
    cudaGetLastError();
}

ClockProbe::~ClockProbe() {
  if (host_) cudaFreeHost(host_);
}

double ClockProbe::measure_mhz(void* stream) {
  if (!host_) return 0;
  unsigned long long* dev = nullptr;
  if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), host_, 0) != cudaSuccess) return 0;
  host_[0] = host_[1] = 0;
  auto s = static_cast<cudaStream_t>(stream);
  clock_probe_kernel<<<1, 1, 0, s>>>(dev);
  cuda_check(cudaGetLastError(), "the clock probe");
  cuda_check(cudaStreamSynchronize(s), "the clock probe");
  return host_[1] ? static_cast<double>(host_[0]) / static_cast<double>(host_[1]) * 1e3 : 0;
}

}  // namespace kq
