// Flaw: relu as fmaxf(s, 0), which returns 0 for a NaN sum (max.f32 ignores a NaN operand).
// Only the ieee spec has NaN inputs, so it takes that one alone. Caught by: values
// (values/nan_in_x).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace nan_swallowed {

struct Flawed {
  __device__ float operator()(float x, float r) const { return fmaxf(x + r, 0.0f); }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("nan_swallowed", "values", Takes::residual_relu_ieee) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "nan_swallowed");
  }
};

}  // namespace nan_swallowed

std::unique_ptr<IKernelArm> make_nan_swallowed() { return std::make_unique<nan_swallowed::Arm>(); }

}  // namespace kq::broken::cuda
