// Flaw: softmax over rows in steps of 32 without the scalar tail: the last N % 32 elements of
// each row are neither read nor written. Caught by: values (conduct/M=7,N=1025: the last
// element keeps the poison, and the others are normalised over 1024 of the 1025).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class SoftmaxTailSkipped final : public ShapedArm {
 public:
  SoftmaxTailSkipped()
      : ShapedArm("softmax_tail_skipped", "values", "softmax over the last dim", kSoftmax,
                  softmax_dtypes()) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &y = out[0];
    const std::int64_t n32 = x.shape[1] - x.shape[1] % 32;
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      double mx = -std::numeric_limits<double>::infinity(), s = 0;
      for (std::int64_t n = 0; n < n32; ++n) mx = std::max(mx, get(x, {m, n}));
      for (std::int64_t n = 0; n < n32; ++n) s += std::exp(get(x, {m, n}) - mx);
      for (std::int64_t n = 0; n < n32; ++n) put(y, {m, n}, std::exp(get(x, {m, n}) - mx) / s);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_softmax_tail_skipped() {
  return std::make_unique<SoftmaxTailSkipped>();
}

}  // namespace kq::broken::cpu
