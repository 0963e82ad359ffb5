// Flaw: argmax that gives ties to the last index (a >= where > belongs); the spec, as torch,
// gives them to the first. Caught by: values (values/constant_rows: every element of a row
// ties; the integers in [-3, 3] tie too).
#include <cmath>
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class ArgmaxLastTie final : public ShapedArm {
 public:
  ArgmaxLastTie()
      : ShapedArm("argmax_last_tie", "values", "argmax over the last dim", R"(
          out0[i0] = argmax(i1, in0[i0, i1])
          shapes: in0[d0, d1] out0[d0]
        )",
                  {{DType::f32, DType::i64}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &idx = out[0];
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      std::int64_t best = 0;
      double top = get(x, {m, 0});
      for (std::int64_t n = 1; n < x.shape[1] && !std::isnan(top); ++n) {
        const double v = get(x, {m, n});
        if (std::isnan(v) || v >= top) top = v, best = n;  // the first NaN still ends it
      }
      put(idx, {m}, static_cast<double>(best));
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_argmax_last_tie() { return std::make_unique<ArgmaxLastTie>(); }

}  // namespace kq::broken::cpu
