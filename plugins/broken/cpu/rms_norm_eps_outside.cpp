// Flaw: RMS norm with eps added outside the root, x / (sqrt(mean(x^2)) + eps), where the spec
// has 1 / sqrt(mean(x^2) + eps). The two agree for rows of magnitude 1 and part for rows near
// sqrt(eps). Caught by: values (values/mixed_1e-3: rows of about 6e-4 rms against
// sqrt(1e-6) = 1e-3, outputs about twice too large).
#include <cmath>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class RmsNormEpsOutside final : public ShapedArm {
 public:
  RmsNormEpsOutside()
      : ShapedArm("rms_norm_eps_outside", "values", "RMS norm over the last dim", R"(
          tmp0[i0] = div(1, sqrt(add(div(sum(i1, mul(in0[i0, i1], in0[i0, i1])), d1), p0)))
          out0[i0, i1] = mul(mul(in0[i0, i1], tmp0[i0]), in1[i1])
          shapes: in0[d0, d1] in1[d1] out0[d0, d1] tmp0[d0]
        )",
                  {{DType::bf16, DType::bf16, DType::bf16}, {DType::f32, DType::f32, DType::f32}}) {
  }

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &w = in[1], &y = out[0];
    const double eps = spec().program->decls.params.at(0).value;
    const std::int64_t n_cols = x.shape[1];
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      double sq = 0;
      for (std::int64_t n = 0; n < n_cols; ++n) sq += get(x, {m, n}) * get(x, {m, n});
      const double rstd = 1.0 / (std::sqrt(sq / static_cast<double>(n_cols)) + eps);
      for (std::int64_t n = 0; n < n_cols; ++n) put(y, {m, n}, get(x, {m, n}) * rstd * get(w, {n}));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_rms_norm_eps_outside() {
  return std::make_unique<RmsNormEpsOutside>();
}

}  // namespace kq::broken::cpu
