// Flaw: softmax without the row's max subtracted, exp(x) / sum(exp(x)), with exp in float32 as
// the spec computes: exp(x) overflows to inf above x = 88.7, and the row becomes inf / inf = NaN
// and 0. Caught by: values (values/mixed_1e3: inputs up to 1000). Where a spec bounds the inputs
// (max_abs_input: 32: specs/softmax_bf16.yaml, kernelbench 23) nothing overflows and it passes,
// rightly; kq tells an arm no such bound, so it sits in the test-spec plugin (README.md).
#include <cmath>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class SoftmaxNoMax final : public ShapedArm {
 public:
  SoftmaxNoMax()
      : ShapedArm("softmax_no_max", "values", "softmax over the last dim", kSoftmax,
                  softmax_dtypes()) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &y = out[0];
    auto e = [&](std::int64_t m, std::int64_t n) {
      return static_cast<double>(std::exp(static_cast<float>(get(x, {m, n}))));
    };
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      double s = 0;
      for (std::int64_t n = 0; n < x.shape[1]; ++n) s += e(m, n);
      for (std::int64_t n = 0; n < x.shape[1]; ++n) put(y, {m, n}, e(m, n) / s);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_softmax_no_max() { return std::make_unique<SoftmaxNoMax>(); }

}  // namespace kq::broken::cpu
