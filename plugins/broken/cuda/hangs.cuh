// Flaw: a kernel waits for a device flag that nothing ever sets, so the caller's stream never
// drains. Caught by: hang (the worker is silent past its deadline and is killed).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace hangs {

__device__ int g_released;  // zero, and nothing ever writes it

__global__ void hangs(const float* __restrict__ x, const float* __restrict__ r,
                      float* __restrict__ out, std::int64_t n) {
  if (global_thread() == 0) {
    const volatile int* released = &g_released;  // volatile: re-read on every iteration
    while (*released == 0) __nanosleep(1000);
  }
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = relu(x[i] + r[i]);
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("hangs", "hang") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    hangs<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n);
    return launched("hangs");
  }
};

}  // namespace hangs

std::unique_ptr<IKernelArm> make_hangs() { return std::make_unique<hangs::Arm>(); }

}  // namespace kq::broken::cuda
