// Flaw: relu as fmax(s, 0), which returns 0 for a NaN sum (C's fmax ignores a NaN operand).
// Only the ieee spec has NaN inputs, so it takes that one alone. Caught by: values
// (values/nan_in_x).
#include <cmath>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class NanSwallowed final : public CpuArm {
 public:
  NanSwallowed() : CpuArm("nan_swallowed", "values", Takes::residual_relu_ieee) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = std::fmax(x[i] + r[i], 0.0f);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_nan_swallowed() { return std::make_unique<NanSwallowed>(); }

}  // namespace kq::broken::cpu
