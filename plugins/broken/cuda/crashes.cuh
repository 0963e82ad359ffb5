// Flaw: writes through a pointer that was never set (a scratch buffer nobody allocated):
// an illegal address, a sticky CUDA error. Caught by: cuda_error.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace crashes {

__global__ void crashes(const float* __restrict__ x, const float* __restrict__ r,
                        float* __restrict__ out, std::int64_t n, float* scratch) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = relu(x[i] + r[i]);
  if (global_thread() == 0) *scratch = x[0];  // the flaw: scratch is null
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("crashes", "cuda_error") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    crashes<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n, scratch_);
    return launched("crashes");
  }

 private:
  float* scratch_ = nullptr;  // never allocated
};

}  // namespace crashes

std::unique_ptr<IKernelArm> make_crashes() { return std::make_unique<crashes::Arm>(); }

}  // namespace kq::broken::cuda
