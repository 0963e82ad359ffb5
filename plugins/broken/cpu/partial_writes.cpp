// Flaw: skips every 7th element (an unrolled loop whose step is one too large).
// Caught by: values (size/7 and up: the poison stays there).
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class PartialWrites final : public CpuArm {
 public:
  PartialWrites() : CpuArm("partial_writes", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i)
      if (i % 7 != 6) o[i] = relu(x[i] + r[i]);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_partial_writes() { return std::make_unique<PartialWrites>(); }

}  // namespace kq::broken::cpu
