#include "timing/timer.hpp"

#include <chrono>

#include "device/cuda_check.hpp"

namespace kq {

SampleTimer::SampleTimer(Device device, void* stream) : device_(device), stream_(stream) {
#if KQ_HAVE_CUDA
  if (device == Device::cuda) {
    cudaEvent_t a, b;
    cuda_check(cudaEventCreate(&a), "cudaEventCreate");
    cuda_check(cudaEventCreate(&b), "cudaEventCreate");
    start_ = a;
    stop_ = b;
  }
#endif
}

SampleTimer::~SampleTimer() {
#if KQ_HAVE_CUDA
  if (start_) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stop_) cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
#endif
}

double SampleTimer::time(const std::function<void()>& call) {
#if KQ_HAVE_CUDA
  if (device_ == Device::cuda) {
    auto s = static_cast<cudaStream_t>(stream_);
    cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(start_), s), "cudaEventRecord");
    call();
    cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(stop_), s), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)), "the timed call");
    cuda_check(cudaGetLastError(), "the timed call");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_),
                                    static_cast<cudaEvent_t>(stop_)),
               "cudaEventElapsedTime");
    return ms * 1e-3;
  }
#endif
  auto t0 = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

L2Flusher::L2Flusher(Device device) : device_(device) {
#if KQ_HAVE_CUDA
  if (device == Device::cuda) {
    int dev = 0, l2 = 0;
    cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
    bytes_ = static_cast<std::size_t>(l2) * 2;
    cuda_check(cudaMalloc(&buffer_, bytes_), "cudaMalloc (L2 flush buffer)");
  }
#endif
}

L2Flusher::~L2Flusher() {
#if KQ_HAVE_CUDA
  if (buffer_) cudaFree(buffer_);
#endif
}

void L2Flusher::flush(void* stream) {
#if KQ_HAVE_CUDA
  if (buffer_)
    cuda_check(cudaMemsetAsync(buffer_, 0, bytes_, static_cast<cudaStream_t>(stream)), "L2 flush");
#else
  (void)stream;
#endif
}

}  // namespace kq
