// Flaw: returns an error for more than 2^20 elements (a fixed-size scratch buffer), though the
// contract admits any size. Caught by: arm_error (size/1048579).
#include <memory>
#include <string>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ErrorsOnLarge final : public CpuArm {
 public:
  ErrorsOnLarge() : CpuArm("errors_on_large", "arm_error") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    if (n > kScratch)
      return Status::error("scratch buffer holds " + std::to_string(kScratch) + " elements, " +
                           std::to_string(n) + " requested");
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    return Status::ok();
  }

 private:
  static constexpr std::int64_t kScratch = std::int64_t{1} << 20;
};

}  // namespace

std::unique_ptr<IKernelArm> make_errors_on_large() { return std::make_unique<ErrorsOnLarge>(); }

}  // namespace kq::broken::cpu
