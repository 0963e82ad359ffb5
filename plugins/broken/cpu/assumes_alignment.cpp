// Flaw: treats the input pointers as 16-byte aligned: like AltiVec's lvx, which ignores the low
// four address bits, it reads from the pointer rounded down to 16 bytes. Right whenever the
// caller's pointers are aligned; the spec only promises 4. Caught by: values (offset/x+4...).
#include <cstdint>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

const float* align_down_16(const float* p) {
  return reinterpret_cast<const float*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{15});
}

class AssumesAlignment final : public CpuArm {
 public:
  AssumesAlignment() : CpuArm("assumes_alignment", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    const float* xa = align_down_16(x);
    const float* ra = align_down_16(r);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(xa[i] + ra[i]);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_assumes_alignment() {
  return std::make_unique<AssumesAlignment>();
}

}  // namespace kq::broken::cpu
