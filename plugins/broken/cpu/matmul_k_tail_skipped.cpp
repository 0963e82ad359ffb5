// Flaw: a matrix product in k-tiles of 32 without the tail: the last K % 32 terms of every sum
// are left out. Caught by: values (any case whose K is not a multiple of 32; at K < 32 the sum is
// empty). Exact small-integer cases compare bitwise, so a tolerance cannot hide the missing
// terms.
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class MatmulKTailSkipped final : public ShapedArm {
 public:
  MatmulKTailSkipped()
      : ShapedArm("matmul_k_tail_skipped", "values", "a float32 matrix product C = A B", kMatmul,
                  {{DType::f32, DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    matmul(
        in[0], in[1], out[0],
        [&](std::int64_t m, std::int64_t n, std::int64_t k) {
          return get(in[0], {m, k}) * get(in[1], {k, n});
        },
        [](double s, double t) { return s + t; }, [](std::int64_t K) { return K - K % 32; });
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_k_tail_skipped() {
  return std::make_unique<MatmulKTailSkipped>();
}

}  // namespace kq::broken::cpu
