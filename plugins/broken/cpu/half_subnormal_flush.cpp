// Flaw: half subnormals are flushed to zero, keeping the sign, on input and on output (what
// flush-to-zero half arithmetic does): an input below the dtype's smallest normal reads as zero,
// a result that rounds below it is stored as zero. Caught by: values (values/denormal, and the
// subnormal inputs of the other classes).
#include <cmath>
#include <limits>
#include <memory>

#include "half_arm.hpp"

namespace kq::broken::cpu {
namespace {

class HalfSubnormalFlush final : public HalfArm {
 public:
  HalfSubnormalFlush()
      : HalfArm("half_subnormal_flush", {{"residual_relu", DType::bf16},
                                         {"residual_relu", DType::f16},
                                         {"silu_mul", DType::bf16},
                                         {"gelu", DType::f16}}) {}

 protected:
  double load(double element) const override { return flush(element); }
  void store(double result, void* dst) const override {
    HalfArm::store(flush(kq::round_to(spec().dtype, result)), dst);
  }

 private:
  double flush(double v) const {
    const double min_normal = with_dtype(spec().dtype, []<class T>(T) {
      return static_cast<double>(std::numeric_limits<T>::min());
    });
    return std::fabs(v) < min_normal ? std::copysign(0.0, v) : v;
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_half_subnormal_flush() {
  return std::make_unique<HalfSubnormalFlush>();
}

}  // namespace kq::broken::cpu
