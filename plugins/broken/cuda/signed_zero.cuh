// Flaw: a negative sum becomes s * 0 = -0 instead of +0. Equal as numbers, not as bits: the
// shipped residual_relu specs compare bitwise. Caught by: values (any negative sum).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace signed_zero {

struct Flawed {
  __device__ float operator()(float x, float r) const {
    const float s = x + r;
    return s > 0.0f ? s : s * 0.0f;  // -0 for s < 0 (and NaN stays NaN)
  }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("signed_zero", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "signed_zero");
  }
};

}  // namespace signed_zero

std::unique_ptr<IKernelArm> make_signed_zero() { return std::make_unique<signed_zero::Arm>(); }

}  // namespace kq::broken::cuda
