// Flaw: computes in bfloat16 (8 significant bits): inputs and sum rounded to bf16.
// Caught by: values (any positive sum).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <bit>
#include <cstdint>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

// Round to nearest even at bfloat16 precision (the top 16 bits of a float); NaN stays NaN.
float to_bf16(float f) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return f;
  b += 0x7fffu + ((b >> 16) & 1u);
  return std::bit_cast<float>(b & 0xffff0000u);
}

class LowPrecision final : public CpuArm {
 public:
  LowPrecision() : CpuArm("low_precision", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(to_bf16(to_bf16(x[i]) + to_bf16(r[i])));
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_low_precision() { return std::make_unique<LowPrecision>(); }

}  // namespace kq::broken::cpu
