// Flaw: out = relu(x) + residual, the relu applied to one input instead of the sum.
// Caught by: values (mixed signs).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ReluOneInput final : public CpuArm {
 public:
  ReluOneInput() : CpuArm("relu_one_input", "values") {}

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
