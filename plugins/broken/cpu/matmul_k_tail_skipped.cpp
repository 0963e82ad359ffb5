// Flaw: a matrix product in k-tiles of 32 without the tail: the last K % 32 terms of every sum
// are left out. Caught by: values (any case whose K is not a multiple of 32; at K < 32 the sum is
// empty). Exact small-integer cases compare bitwise, so a tolerance cannot hide the missing
// terms.
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class MatmulKTailSkipped final : public MatmulArm {
 public:
  MatmulKTailSkipped() : MatmulArm("matmul_k_tail_skipped") {}

 protected:
  std::int64_t terms(std::int64_t K) const override { return K - K % 32; }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_k_tail_skipped() {
  return std::make_unique<MatmulKTailSkipped>();
}

}  // namespace kq::broken::cpu
