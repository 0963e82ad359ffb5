// Flaw: accumulates the sum into x in place (x += residual) before the relu: the results are
// right, the caller's input is not. Caught by: input_modified.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace mutates_input {

__global__ void mutates_input(float* x, const float* __restrict__ r, float* __restrict__ out,
                              std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    x[i] += r[i];  // the flaw
    out[i] = relu(x[i]);
  }
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("mutates_input", "input_modified") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    mutates_input<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(const_cast<float*>(d.x), d.r,
                                                                       d.out, d.n);
    return launched("mutates_input");
  }
};

}  // namespace mutates_input

std::unique_ptr<IKernelArm> make_mutates_input() { return std::make_unique<mutates_input::Arm>(); }

}  // namespace kq::broken::cuda
