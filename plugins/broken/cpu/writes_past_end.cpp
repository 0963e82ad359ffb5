// Flaw: writes a zero "terminator" one element past the end of the output.
// Caught by: output_guard (the guard zone after the output changes), or by crash when the
// output ends right before an unmapped page (fence/out_end): whichever case comes first.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class WritesPastEnd final : public CpuArm {
 public:
  WritesPastEnd() : CpuArm("writes_past_end", "output_guard|crash") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    o[n] = 0.0f;
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_writes_past_end() { return std::make_unique<WritesPastEnd>(); }

}  // namespace kq::broken::cpu
