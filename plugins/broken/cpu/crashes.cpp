// Flaw: writes through a null pointer (a scratch pointer that was never set).
// Caught by: crash (SIGSEGV kills the worker).
#include <cstdint>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class Crashes final : public CpuArm {
 public:
  Crashes() : CpuArm("crashes", "crash") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    // Through a volatile address, so that the compiler neither drops the store nor turns it
    // into a trap instruction (SIGILL): the point is a plain SIGSEGV.
    *reinterpret_cast<volatile float*>(static_cast<std::uintptr_t>(scratch_)) = o[0];
    return Status::ok();
  }

 private:
  volatile std::uintptr_t scratch_ = 0;
};

}  // namespace

std::unique_ptr<IKernelArm> make_crashes() { return std::make_unique<Crashes>(); }

}  // namespace kq::broken::cpu
