// Flaw: a negative sum becomes s * 0 = -0 instead of +0. Equal as numbers, not as bits: the
// shipped residual_relu specs compare bitwise. Caught by: values (any negative sum), or
// new_values.
// The flaw shows on some elements only (it depends on the sum's sign), so on a one-element
// case the first inputs may not show it and the third run's new inputs do: new_values, the same
// value comparison on new inputs, then catches it first.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace {

struct Flawed {
  __device__ float operator()(float x, float r) const {
    const float s = x + r;
    return s > 0.0f ? s : s * 0.0f;  // -0 for s < 0 (and NaN stays NaN)
  }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("signed_zero", "values|new_values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "signed_zero");
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_signed_zero() { return std::make_unique<Arm>(); }

}  // namespace kq::broken::cuda
