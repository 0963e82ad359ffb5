// Flaw: a negative sum becomes s * 0 = -0 instead of +0. Equal as numbers, not as bits: the
// shipped residual_relu specs compare bitwise. Caught by: values (any negative sum).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class SignedZero final : public CpuArm {
 public:
  SignedZero() : CpuArm("signed_zero", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) {
      const float s = x[i] + r[i];
      o[i] = s > 0.0f ? s : s * 0.0f;  // -0 for s < 0 (and NaN stays NaN)
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_signed_zero() { return std::make_unique<SignedZero>(); }

}  // namespace kq::broken::cpu
