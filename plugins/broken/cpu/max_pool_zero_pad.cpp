// Flaw: max pooling whose reads outside x count as 0, where the spec pads with -inf (as PyTorch's
// max pooling does): a window at an edge whose elements inside x are all negative gives 0
// instead of their max. Caught by: values (an edge window of a case whose values run negative).
#include <algorithm>
#include <limits>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

// KernelBench 41: kernel 8, stride 1, dilation 3, padding 4.
constexpr const char* kMaxPool1d = R"(
  out0[i0, i1, i2] = max(i3 : 8, in0[i0, i1, sub(add(i2, mul(3, i3)), 4)])
  shapes: in0[d0, d1, d2] pad -inf out0[d0, d1, d3]
  derived: d3 = ( d2 + 2 * 4 - 3 * ( 8 - 1 ) - 1 ) / 1 + 1
)";

class MaxPoolZeroPad final : public ShapedArm {
 public:
  MaxPoolZeroPad()
      : ShapedArm("max_pool_zero_pad", "values",
                  "a float32 max pooling (kernel 8, dilation 3, padding 4 of -inf)", kMaxPool1d,
                  {{DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    const TensorView &x = in[0], &y = out[0];
    const std::int64_t B = x.shape[0], C = x.shape[1], L = x.shape[2], LO = y.shape[2];
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t i = 0; i < LO; ++i) {
          double m = -std::numeric_limits<double>::infinity();
          for (std::int64_t k = 0; k < 8; ++k) {
            const std::int64_t p = i + 3 * k - 4;
            m = std::max(m, p >= 0 && p < L ? get(x, {b, c, p}) : 0.0);  // the flaw: 0, not -inf
          }
          put(y, {b, c, i}, m);
        }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_max_pool_zero_pad() { return std::make_unique<MaxPoolZeroPad>(); }

}  // namespace kq::broken::cpu
