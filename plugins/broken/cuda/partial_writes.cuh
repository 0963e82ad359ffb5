// Flaw: skips every 7th element. Caught by: values (size/7 and up: the poison stays there).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace partial_writes {

__global__ void partial_writes(const float* __restrict__ x, const float* __restrict__ r,
                               float* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    if (i % 7 != 6) out[i] = relu(x[i] + r[i]);
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("partial_writes", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    partial_writes<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n);
    return launched("partial_writes");
  }
};

}  // namespace partial_writes

std::unique_ptr<IKernelArm> make_partial_writes() {
  return std::make_unique<partial_writes::Arm>();
}

}  // namespace kq::broken::cuda
