// Flaw: walks every view as if its rows were dense: the outer strides are honoured, the innermost
// one is taken to be 1. Right on contiguous views; leaky_relu's contract admits strided ones.
// (Ignoring the outer strides as well would read past the end of a broadcast view's memory.)
// Caught by: values (layout/x_stride2, the first strided case; layout/out_stride2 also writes
// into the gaps).
#include <array>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class IgnoresStrides final : public CpuArm {
 public:
  IgnoresStrides() : CpuArm("ignores_strides", "values", Takes::leaky_relu) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    std::array<TensorView, 2> v{out[0], in[0]};
    for (TensorView& t : v) t.strides[t.rank - 1] = 1;  // the flaw
    leaky_strided(v[0], v[1]);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_ignores_strides() { return std::make_unique<IgnoresStrides>(); }

}  // namespace kq::broken::cpu
