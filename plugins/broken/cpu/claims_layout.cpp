// Flaw: never checks the contract. It walks any view with its strides (so it computes the right
// numbers even for strided, broadcast or rank-5 views) and returns ok, where the spec says
// those calls are outside the contract and must be refused; a partially overlapping output it
// computes with garbage. Caught by: accepted_out_of_contract (rank/2x3x1x5x7, layout/...).
#include <array>
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ClaimsLayout final : public CpuArm {
 public:
  ClaimsLayout() : CpuArm("claims_layout", "accepted_out_of_contract") {}

 protected:
  bool checks_contract() const override { return false; }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    if (Status s = same_shape(in, out); !s.is_ok()) return s;
    const std::array<TensorView, 3> v{out[0], in[0], in[1]};
    auto* o = static_cast<float*>(v[0].data);
    const auto* x = static_cast<const float*>(v[1].data);
    const auto* r = static_cast<const float*>(v[2].data);
    for_each_element(v, [&](const std::array<std::int64_t, 3>& off) {
      o[off[0]] = relu(x[off[1]] + r[off[2]]);
    });
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_claims_layout() { return std::make_unique<ClaimsLayout>(); }

}  // namespace kq::broken::cpu
