// Flaw: cross-entropy with log(sum(exp(x))) for the log-sum-exp, the row's max not subtracted,
// exp in float32 as the spec computes: above x = 88.7 exp overflows and the loss is inf.
// Caught by: values (values/mixed_1e3: logits up to 1000).
#include <cmath>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class CrossEntropyNoLse final : public ShapedArm {
 public:
  CrossEntropyNoLse()
      : ShapedArm("cross_entropy_no_lse", "values",
                  "the mean cross-entropy of logits over the last dim against target indices", R"(
          tmp0[i0] = max(i1, in0[i0, i1])
          tmp1[i0] = add(tmp0[i0], log(sum(i1, exp(sub(in0[i0, i1], tmp0[i0])))))
          out0 = div(sum(i0, sub(tmp1[i0], in0[i0, in1[i0]])), d0)
          shapes: in0[d0, d1] in1[d0] out0[] tmp0[d0] tmp1[d0]
        )",
                  {{DType::f32, DType::i64, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &t = in[1];
    const std::int64_t rows = x.shape[0];
    double total = 0;
    for (std::int64_t m = 0; m < rows; ++m) {
      double s = 0;
      for (std::int64_t n = 0; n < x.shape[1]; ++n)
        s += std::exp(static_cast<float>(get(x, {m, n})));
      const auto target = static_cast<std::int64_t>(get(t, {m}));
      total += std::log(s) - get(x, {m, target});
    }
    put(out[0], {}, total / static_cast<double>(rows));
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_cross_entropy_no_lse() {
  return std::make_unique<CrossEntropyNoLse>();
}

}  // namespace kq::broken::cpu
