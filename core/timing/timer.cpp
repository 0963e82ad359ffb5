#include "timing/timer.hpp"

#include <chrono>

#include "device/cuda_check.hpp"
#include "timing/blocking_kernel.hpp"

namespace kq {

SampleTimer::SampleTimer(Device device, void* stream, bool hold, double hold_timeout_s)
    : device_(device), stream_(stream) {
#if KQ_HAVE_CUDA
  if (device == Device::cuda) {
    cudaEvent_t a, b;
    cuda_check(cudaEventCreate(&a), "cudaEventCreate");
    cuda_check(cudaEventCreate(&b), "cudaEventCreate");
    start_ = a;
    stop_ = b;
    if (hold) {
      hold_ = std::make_unique<BlockingKernel>(hold_timeout_s);
      if (!hold_->usable()) hold_.reset();
    }
  }
#else
  (void)hold;
  (void)hold_timeout_s;
#endif
}

void SampleTimer::stop_holding() { hold_.reset(); }

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
    if (hold_) hold_->block(s);
    {
      // Released however the enqueue ends: a throwing call must not leave the GPU spinning.
      struct Release {
        BlockingKernel* k;
        ~Release() {
          if (k) k->release();
        }
      } release{hold_.get()};
      cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(start_), s), "cudaEventRecord");
      call();
      cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(stop_), s), "cudaEventRecord");
    }
    cuda_check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)), "the timed call");
    last_held_ = hold_ && hold_->held();
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
