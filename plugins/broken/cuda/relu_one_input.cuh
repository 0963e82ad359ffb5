// Flaw: out = relu(x) + residual, the relu applied to one input instead of the sum.
// Caught by: values (mixed signs).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace relu_one_input {

struct Flawed {
  __device__ float operator()(float x, float r) const { return relu(x) + r; }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("relu_one_input", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "relu_one_input");
  }
};

}  // namespace relu_one_input

std::unique_ptr<IKernelArm> make_relu_one_input() {
  return std::make_unique<relu_one_input::Arm>();
}

}  // namespace kq::broken::cuda
