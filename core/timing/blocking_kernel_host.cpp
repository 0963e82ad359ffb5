// Without CUDA there is no stream to hold.
#if !KQ_HAVE_CUDA
#include "timing/blocking_kernel.hpp"

namespace kq {
BlockingKernel::BlockingKernel(double) : timeout_ns_(0) {}
BlockingKernel::~BlockingKernel() = default;
void BlockingKernel::block(void*) {}
void BlockingKernel::release() {}
bool BlockingKernel::held() const { return false; }
}  // namespace kq
#endif
