// Flaw: a float32 matrix product that reads its operands as TF32 (10 explicit mantissa bits,
// rounded to nearest), as tensor cores do with TF32 allowed, where the spec declares float32.
// The products are then off by up to 2^-10 relative, far beyond a float32 product's rounding.
// Caught by: values, at small K (at K = 1 the bound is 2 u |a b| with u = 2^-24).
#include <cmath>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

// x rounded to 11 significant bits (TF32's), to nearest, ties to even.
double to_tf32(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);
  const double scale = std::ldexp(1.0, 11 - e);
  return std::nearbyint(x * scale) / scale;
}

class MatmulTf32Inputs final : public MatmulArm {
 public:
  MatmulTf32Inputs() : MatmulArm("matmul_tf32_inputs") {}

 protected:
  double term(double a, double b) const override { return to_tf32(a) * to_tf32(b); }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_tf32_inputs() {
  return std::make_unique<MatmulTf32Inputs>();
}

}  // namespace kq::broken::cpu
