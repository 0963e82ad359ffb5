// Flaw: a shortcut taken only at sizes the old qualification never visited: when n is a power
// of two of at least 65536 elements (the usual timing sizes; qualification's own size cases are
// odd), only the first half of the elements is computed, the rest left as they were.
// Caught by: values (qualification's timing/<n> cases, which run every timing size of the
// spec), or timing_output (the timing loop checks the output it times).
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class SizeShortcut final : public CpuArm {
 public:
  SizeShortcut() : CpuArm("size_shortcut", "values|timing_output") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    const bool shortcut = n >= 65536 && (n & (n - 1)) == 0;
    const std::int64_t m = shortcut ? n / 2 : n;  // the flaw
    for (std::int64_t i = 0; i < m; ++i) o[i] = relu(x[i] + r[i]);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_size_shortcut() { return std::make_unique<SizeShortcut>(); }

}  // namespace kq::broken::cpu
