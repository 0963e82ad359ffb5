// Flaw: refuses pointers that are not 16-byte aligned (a vector kernel without its scalar
// fallback), though the spec admits 4-byte alignment. Caught by: refused_in_contract
// (offset/x+4...).
#include <memory>

#include "common/aligned_16.hpp"
#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class RefusesUnaligned final : public CpuArm {
 public:
  RefusesUnaligned() : CpuArm("refuses_unaligned", "refused_in_contract") {}

 protected:
  Status on_prepare(const Problem& p) override { return aligned_16(p.inputs, p.outputs); }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    if (Status s = aligned_16(in, out); !s.is_ok()) return s;
    auto [x, r, o, n] = dense2(in, out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_refuses_unaligned() {
  return std::make_unique<RefusesUnaligned>();
}

}  // namespace kq::broken::cpu
