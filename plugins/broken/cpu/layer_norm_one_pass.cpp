// Flaw: layer norm with the one-pass variance in float32, E[x^2] - E[x]^2, both sums accumulated
// in float: where the mean is large against the spread the two terms nearly cancel, and the
// variance keeps only their rounding errors, often below zero (rstd NaN). Caught by: values
// (values/constant_rows: a variance of 0 comes out negative; values/offset_rows: bf16 rows at
// 256 +- 1, whose E[x^2] near 65536 carries errors beyond a variance of about 1).
#include <cmath>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class LayerNormOnePass final : public ShapedArm {
 public:
  LayerNormOnePass()
      : ShapedArm("layer_norm_one_pass", "values", "layer norm over the last dim", R"(
          out1[i0] = div(sum(i1, in0[i0, i1]), d1)
          tmp0[i0] = div(sum(i1, mul(sub(in0[i0, i1], out1[i0]), sub(in0[i0, i1], out1[i0]))), d1)
          out2[i0] = div(1, sqrt(add(tmp0[i0], p0)))
          out0[i0, i1] = add(mul(mul(sub(in0[i0, i1], out1[i0]), out2[i0]), in1[i1]), in2[i1])
          shapes: in0[d0, d1] in1[d1] in2[d1] out0[d0, d1] out1[d0] out2[d0] tmp0[d0]
        )",
                  {{DType::bf16, DType::bf16, DType::bf16, DType::bf16, DType::f32, DType::f32},
                   {DType::f32, DType::f32, DType::f32, DType::f32, DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &w = in[1], &b = in[2];
    const TensorView &y = out[0], &mean_out = out[1], &rstd_out = out[2];
    const auto eps = static_cast<float>(spec().program->decls.params.at(0).value);
    const std::int64_t n_cols = x.shape[1];
    const auto count = static_cast<float>(n_cols);
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      float s = 0, sq = 0;
      for (std::int64_t n = 0; n < n_cols; ++n) {
        const auto v = static_cast<float>(get(x, {m, n}));
        s += v;
        sq += v * v;
      }
      const float mean = s / count;
      const float var = sq / count - mean * mean;
      const float rstd = 1.0f / std::sqrt(var + eps);
      put(mean_out, {m}, mean);
      put(rstd_out, {m}, rstd);
      for (std::int64_t n = 0; n < n_cols; ++n)
        put(y, {m, n}, (get(x, {m, n}) - mean) * rstd * get(w, {n}) + get(b, {n}));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_layer_norm_one_pass() {
  return std::make_unique<LayerNormOnePass>();
}

}  // namespace kq::broken::cpu
