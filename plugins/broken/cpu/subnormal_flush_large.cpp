// Flaw: a "fast path" for big tensors: from 2^20 elements on, subnormal inputs and sums are
// flushed to zero (keeping their sign), as FTZ/DAZ would; below that the arm is exact. The
// flush is explicit, per element: the process's MXCSR is left alone.
// Caught by: values (the size cases from 4096 elements on carry subnormals, and size/1048579
// runs with --quick too).
#include <cmath>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

inline float flushed(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v;
}

class SubnormalFlushLarge final : public CpuArm {
 public:
  SubnormalFlushLarge() : CpuArm("subnormal_flush_large", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    if (n < kLarge) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
      return Status::ok();
    }
    for (std::int64_t i = 0; i < n; ++i)  // the flaw
      o[i] = relu(flushed(flushed(x[i]) + flushed(r[i])));
    return Status::ok();
  }

 private:
  static constexpr std::int64_t kLarge = std::int64_t{1} << 20;
};

}  // namespace

std::unique_ptr<IKernelArm> make_subnormal_flush_large() {
  return std::make_unique<SubnormalFlushLarge>();
}

}  // namespace kq::broken::cpu
