// Flaw: clears the whole memory span of a strided output before writing its elements, so the
// gaps between them (which belong to the caller) are overwritten with zeros. leaky_relu's
// contract admits strided outputs. Caught by: output_gaps (layout/out_stride2).
#include <cstring>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class FillsGaps final : public CpuArm {
 public:
  FillsGaps() : CpuArm("fills_gaps", "output_gaps", Takes::leaky_relu) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    // Not when the output is the input (in place): clearing would destroy the input first.
    if (!out[0].is_contiguous() && !overlaps(out[0], in[0])) {
      auto [lo, hi] = byte_range(out[0]);
      std::memset(reinterpret_cast<void*>(lo), 0, hi - lo);  // the flaw: gaps included
    }
    leaky_strided(out[0], in[0]);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_fills_gaps() { return std::make_unique<FillsGaps>(); }

}  // namespace kq::broken::cpu
