// Flaw: accumulates the sum into x in place (x += residual) before the relu: the results are
// right, the caller's input is not. Caught by: input_modified.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class MutatesInput final : public CpuArm {
 public:
  MutatesInput() : CpuArm("mutates_input", "input_modified") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    auto* xw = const_cast<float*>(x);
    for (std::int64_t i = 0; i < n; ++i) {
      xw[i] += r[i];
      o[i] = relu(xw[i]);
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_mutates_input() { return std::make_unique<MutatesInput>(); }

}  // namespace kq::broken::cpu
