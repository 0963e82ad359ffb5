// Flaw: softmax whose denominator is accumulated in bfloat16 (8 significant bits), every
// partial sum rounded: once the sum passes 256, terms below 1 round away, and the sum stalls.
// Caught by: values (conduct/M=7,N=1025: the sum of about 440 stops near 256, every output is
// too large).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class SoftmaxBf16Sum final : public ShapedArm {
 public:
  SoftmaxBf16Sum()
      : ShapedArm("softmax_bf16_sum", "values", "softmax over the last dim", kSoftmax,
                  softmax_dtypes()) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &y = out[0];
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      double mx = -std::numeric_limits<double>::infinity(), s = 0;
      for (std::int64_t n = 0; n < x.shape[1]; ++n) mx = std::max(mx, get(x, {m, n}));
      for (std::int64_t n = 0; n < x.shape[1]; ++n)
        s = round_to(DType::bf16, s + std::exp(get(x, {m, n}) - mx));
      for (std::int64_t n = 0; n < x.shape[1]; ++n)
        put(y, {m, n}, std::exp(get(x, {m, n}) - mx) / s);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_softmax_bf16_sum() { return std::make_unique<SoftmaxBf16Sum>(); }

}  // namespace kq::broken::cpu
