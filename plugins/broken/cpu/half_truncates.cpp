// Flaw: the float32 result is converted to the half dtype by truncation (toward zero) instead of
// to nearest even: what `(uint16_t)(bits >> 16)` does for bf16, and an f16 converter that drops
// the low mantissa bits. Off by one ulp wherever the result is not a half value, and past the
// largest finite value it gives that value instead of infinity. Caught by: values (values/ties:
// sums exactly halfway between two half values, half of which round up in magnitude; and any
// inexact sum). Only a bitwise rule sees one ulp: it takes the bitwise half specs.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "half_arm.hpp"

namespace kq::broken::cpu {
namespace {

class HalfTruncates final : public HalfArm {
 public:
  HalfTruncates()
      : HalfArm("half_truncates", {{"residual_relu", DType::bf16}, {"residual_relu", DType::f16}}) {
  }

 protected:
  void store(double result, void* dst) const override {
    std::uint16_t bits = 0;
    store_rounded(spec().dtype, result, &bits);
    // Rounded away from zero: one step back toward it (the encoding is sign and magnitude).
    if (std::fabs(load_as_double(spec().dtype, &bits)) > std::fabs(result)) --bits;
    std::memcpy(dst, &bits, sizeof bits);
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_half_truncates() { return std::make_unique<HalfTruncates>(); }

}  // namespace kq::broken::cpu
