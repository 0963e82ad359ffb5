// Flaw: computes in the half dtype throughout, as a half math library does, where the spec says
// compute f32: every constant and every intermediate is rounded to the dtype, and silu and gelu
// are built from half operations (silu = x * sigmoid(x), sigmoid = 1 / (1 + exp(-x)),
// gelu = 0.5 x * (1 + erf(x * 0.70710678))), each rounded. Caught by: values. silu_mul in bf16
// rounds silu(x) before the product (2 ulps off on some elements, outside {ulp: 1}); gelu in f16
// loses 1 + erf(...) to cancellation for negative x (about 10% near -2). On residual_relu the
// sum is the only rounding (relu is exact), so the flaw is invisible there: not taken.
#include <memory>

#include "half_arm.hpp"

namespace kq::broken::cpu {
namespace {

class HalfThroughout final : public HalfArm {
 public:
  HalfThroughout()
      : HalfArm("half_throughout", {{"silu_mul", DType::bf16}, {"gelu", DType::f16}}) {}

 protected:
  double round(double v) const override { return kq::round_to(spec().dtype, v); }

  double apply(const ExprNode& n, const double* v) const override {
    if (n.op == Op::silu) return silu(v[n.args[0]]);
    if (n.op == Op::gelu) return gelu(v[n.args[0]]);
    return HalfArm::apply(n, v);
  }

 private:
  double sigmoid(double x) const { return 1.0 / round(1.0 + round(std::exp(round(-x)))); }
  double silu(double x) const { return x * round(sigmoid(x)); }
  double gelu(double x) const {
    const double erf = round(std::erf(round(x * round(0.70710678118654752440))));
    return round(0.5 * x) * round(1.0 + erf);
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_half_throughout() { return std::make_unique<HalfThroughout>(); }

}  // namespace kq::broken::cpu
