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

class MatmulTf32Inputs final : public ShapedArm {
 public:
  MatmulTf32Inputs()
      : ShapedArm("matmul_tf32_inputs", "values", "a float32 matrix product C = A B", kMatmul,
                  {{DType::f32, DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    matmul(
        in[0], in[1], out[0],
        [&](std::int64_t m, std::int64_t n, std::int64_t k) {
          return to_tf32(get(in[0], {m, k})) * to_tf32(get(in[1], {k, n}));
        },
        [](double s, double t) { return s + t; }, [](std::int64_t K) { return K; });
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_tf32_inputs() {
  return std::make_unique<MatmulTf32Inputs>();
}

}  // namespace kq::broken::cpu
