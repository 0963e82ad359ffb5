// Flaw: waits for a flag that nothing ever sets. Caught by: hang (the worker is silent past its
// deadline and is killed).
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class Hangs final : public CpuArm {
 public:
  Hangs() : CpuArm("hangs", "hang") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    while (!ready_) {  // volatile: read on every iteration, so the loop is neither removed
    }                  // nor hoisted into an unconditional infinite loop the compiler may drop
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    return Status::ok();
  }

 private:
  volatile bool ready_ = false;
};

}  // namespace

std::unique_ptr<IKernelArm> make_hangs() { return std::make_unique<Hangs>(); }

}  // namespace kq::broken::cpu
