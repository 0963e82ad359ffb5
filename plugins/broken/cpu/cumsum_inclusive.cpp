// Flaw: the exclusive cumsum computed inclusive (each element added before it is written, not
// after): off by one place, y[m, n] = x[m, 0] + ... + x[m, n]. Caught by: values
// (conduct/M=7,N=1025: every element is off by its own x).
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class CumsumInclusive final : public ShapedArm {
 public:
  CumsumInclusive()
      : ShapedArm("cumsum_inclusive", "values", "an exclusive cumsum over the last dim", R"(
          out0[i0, i1] = cumsum(i1, in0[i0, i1], exclusive)
          shapes: in0[d0, d1] out0[d0, d1]
        )",
                  {{DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    const TensorView &x = in[0], &y = out[0];
    for (std::int64_t m = 0; m < x.shape[0]; ++m) {
      double acc = 0;
      for (std::int64_t n = 0; n < x.shape[1]; ++n) {
        acc += get(x, {m, n});  // the flaw: an exclusive scan adds after the write
        put(y, {m, n}, acc);
      }
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_cumsum_inclusive() { return std::make_unique<CumsumInclusive>(); }

}  // namespace kq::broken::cpu
