// Flaw: out = x + residual, the relu forgotten. Caught by: values (any negative sum), or
// new_values.
// The flaw shows on some elements only (it depends on the sum's sign), so on a one-element
// case the first inputs may not show it and the third run's new inputs do: new_values, the same
// value comparison on new inputs, then catches it first.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace {

struct Flawed {
  __device__ float operator()(float x, float r) const { return x + r; }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("no_relu", "values|new_values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "no_relu");
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_no_relu() { return std::make_unique<Arm>(); }

}  // namespace kq::broken::cuda
