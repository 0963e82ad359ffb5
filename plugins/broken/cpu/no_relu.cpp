// Flaw: out = x + residual, the relu forgotten. Caught by: values (any negative sum), or
// new_values.
// The flaw shows on some elements only (it depends on the sum's sign), so on a one-element
// case the first inputs may not show it and the third run's new inputs do: new_values, the same
// value comparison on new inputs, then catches it first.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class NoRelu final : public CpuArm {
 public:
  NoRelu() : CpuArm("no_relu", "values|new_values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = x[i] + r[i];
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_no_relu() { return std::make_unique<NoRelu>(); }

}  // namespace kq::broken::cpu
