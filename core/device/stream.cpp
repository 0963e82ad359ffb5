#include "device/stream.hpp"

#include "device/cuda_check.hpp"

namespace kq {

Stream::Stream(Device device) : device_(device) {
#if KQ_HAVE_CUDA
  if (device == Device::cuda) {
    cudaStream_t s = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    handle_ = s;
  }
#endif
}

Stream::~Stream() {
#if KQ_HAVE_CUDA
  if (handle_) cudaStreamDestroy(static_cast<cudaStream_t>(handle_));
#endif
}

void Stream::synchronize(const char* what) const {
#if KQ_HAVE_CUDA
  if (device_ != Device::cuda) return;
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)), what);
  cuda_check(cudaGetLastError(), what);
#else
  (void)what;
#endif
}

void* host_copy_stream() {
#if KQ_HAVE_CUDA
  static cudaStream_t s = [] {
    cudaStream_t t = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), "cudaStreamCreate (copies)");
    return t;
  }();
  return s;
#else
  return nullptr;
#endif
}

}  // namespace kq
