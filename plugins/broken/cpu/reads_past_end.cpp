// Flaw: a software-pipelined loop loads x[i + 1] before it is known to exist, so the last step
// reads x[n]. The value is never used (the results are right) and the read lands in readable
// memory in every case but one: when x ends right before an unmapped page (fence/x_end), it
// faults. Caught by: crash (SIGSEGV).
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ReadsPastEnd final : public CpuArm {
 public:
  ReadsPastEnd() : CpuArm("reads_past_end", "crash") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    const volatile float* xv = x;  // volatile: the compiler may not drop the dead last load
    float cur = xv[0];
    for (std::int64_t i = 0; i < n; ++i) {
      const float next = xv[i + 1];  // no bounds check: x[n] on the last step
      o[i] = relu(cur + r[i]);
      cur = next;
    }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_reads_past_end() { return std::make_unique<ReadsPastEnd>(); }

}  // namespace kq::broken::cpu
