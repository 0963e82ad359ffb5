// Flaw: a matrix product in 16 x 16 output tiles without the edge tiles: the last M % 16 rows
// and N % 16 columns of C are never written (the poison stays). Caught by: values (any case
// whose M or N is not a multiple of 16).
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class MatmulMnTailSkipped final : public MatmulArm {
 public:
  MatmulMnTailSkipped() : MatmulArm("matmul_mn_tail_skipped") {}

 protected:
  std::int64_t rows(std::int64_t M) const override { return M - M % 16; }
  std::int64_t cols(std::int64_t N) const override { return N - N % 16; }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_mn_tail_skipped() {
  return std::make_unique<MatmulMnTailSkipped>();
}

}  // namespace kq::broken::cpu
