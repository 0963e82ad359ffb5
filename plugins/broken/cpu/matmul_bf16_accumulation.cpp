// Flaw: a float32 matrix product whose running sum is kept in bfloat16 (8 significant bits):
// every partial sum rounded, as a kernel accumulating in its input type would. Caught by: values,
// the accumulation bound of a float32 sum (2 u of float32 times the sum of the running sums or
// sqrt(K) times the magnitudes) being 2^16 times tighter than bfloat16's roundings.
#include <memory>

#include "kq/half.hpp"
#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class MatmulBf16Accumulation final : public MatmulArm {
 public:
  MatmulBf16Accumulation() : MatmulArm("matmul_bf16_accumulation") {}

 protected:
  double accumulate(double sum, double term) const override {
    return round_to(DType::bf16, sum + term);
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_bf16_accumulation() {
  return std::make_unique<MatmulBf16Accumulation>();
}

}  // namespace kq::broken::cpu
