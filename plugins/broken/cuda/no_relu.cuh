// Flaw: out = x + residual, the relu forgotten. Caught by: values (any negative sum).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace no_relu {

struct Flawed {
  __device__ float operator()(float x, float r) const { return x + r; }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("no_relu", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "no_relu");
  }
};

}  // namespace no_relu

std::unique_ptr<IKernelArm> make_no_relu() { return std::make_unique<no_relu::Arm>(); }

}  // namespace kq::broken::cuda
