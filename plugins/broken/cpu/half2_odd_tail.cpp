// Flaw: a "half2" path that computes two elements at a time (a pair of 16-bit values, one 32-bit
// word) and has no scalar tail: when the count is odd the last element is never written.
// Caught by: values (every odd size: the poison stays in the last element).
#include <memory>

#include "half_arm.hpp"

namespace kq::broken::cpu {
namespace {

class Half2OddTail final : public HalfArm {
 public:
  Half2OddTail()
      : HalfArm("half2_odd_tail", {{"residual_relu", DType::bf16},
                                   {"residual_relu", DType::f16},
                                   {"silu_mul", DType::bf16},
                                   {"gelu", DType::f16}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    const std::int64_t pairs = out[0].numel() / 2;
    for (std::int64_t p = 0; p < pairs; ++p) compute_range(in, out[0], 2 * p, 2 * p + 2);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_half2_odd_tail() { return std::make_unique<Half2OddTail>(); }

}  // namespace kq::broken::cpu
