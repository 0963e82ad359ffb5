// Flaw: a float32 matrix product whose running sum is kept in bfloat16 (8 significant bits):
// every partial sum rounded, as a kernel accumulating in its input type would. Caught by: values,
// the accumulation bound of a float32 sum (2 u of float32 times the sum of the running sums or
// sqrt(K) times the magnitudes) being 2^16 times tighter than bfloat16's roundings.
#include <memory>

#include "kq/half.hpp"
#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class MatmulBf16Accumulation final : public ShapedArm {
 public:
  MatmulBf16Accumulation()
      : ShapedArm("matmul_bf16_accumulation", "values", "a float32 matrix product C = A B", kMatmul,
                  {{DType::f32, DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void *) override {
    matmul(
        in[0], in[1], out[0],
        [&](std::int64_t m, std::int64_t n, std::int64_t k) {
          return get(in[0], {m, k}) * get(in[1], {k, n});
        },
        [](double s, double t) { return round_to(DType::bf16, s + t); },
        [](std::int64_t K) { return K; });
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_bf16_accumulation() {
  return std::make_unique<MatmulBf16Accumulation>();
}

}  // namespace kq::broken::cpu
