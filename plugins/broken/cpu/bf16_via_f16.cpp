// Flaw: on a bf16 spec the elements go through f16 (a kernel written for __half, fed bf16 by a
// conversion on each side): bf16 -> f16 -> compute in float32 -> f16 -> bf16. f16 holds every
// bf16 mantissa, but not its range: magnitudes above 65504 become infinity, below 2^-24 zero,
// and below 2^-14 lose bits. Caught by: values (the large and tiny value classes).
#include <memory>

#include "half_arm.hpp"

namespace kq::broken::cpu {
namespace {

class Bf16ViaF16 final : public HalfArm {
 public:
  Bf16ViaF16()
      : HalfArm("bf16_via_f16", {{"residual_relu", DType::bf16}, {"silu_mul", DType::bf16}}) {}

 protected:
  double load(double element) const override { return kq::round_to(DType::f16, element); }
  void store(double result, void* dst) const override {
    HalfArm::store(kq::round_to(DType::f16, result), dst);
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_bf16_via_f16() { return std::make_unique<Bf16ViaF16>(); }

}  // namespace kq::broken::cpu
