// Flaw: out = relu(x) + residual, the relu applied to one input instead of the sum.
// Caught by: values (mixed signs), or new_values.
// The flaw shows on some elements only (it depends on the sum's sign), so on a one-element
// case the first inputs may not show it and the third run's new inputs do: new_values, the same
// value comparison on new inputs, then catches it first.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ReluOneInput final : public CpuArm {
 public:
  ReluOneInput() : CpuArm("relu_one_input", "values|new_values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i]) + r[i];
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_relu_one_input() { return std::make_unique<ReluOneInput>(); }

}  // namespace kq::broken::cpu
