// Flaw: out = x + residual, the relu forgotten. Caught by: values (any negative sum).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class NoRelu final : public CpuArm {
 public:
  NoRelu() : CpuArm("no_relu", "values") {}

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
