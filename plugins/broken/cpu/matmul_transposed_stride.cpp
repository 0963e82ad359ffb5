// Flaw: C = A B^T with B (N, K) read as if it were stored (K, N): element (n, k) taken from
// offset k N + n instead of n K + k, the transposed operand's stride mixed up (every offset
// stays inside B). Caught by: values (any case with N and K above 1; where N = 1 or K = 1 the
// two layouts are one).
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

class MatmulTransposedStride final : public ShapedArm {
 public:
  MatmulTransposedStride()
      : ShapedArm("matmul_transposed_stride", "values",
                  "a float32 matrix product C = A B^T, B (N, K)", kMatmulBT,
                  {{DType::f32, DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    const TensorView &a = in[0], &b = in[1], &c = out[0];
    const std::int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
    const auto* bytes = static_cast<const char*>(b.data);
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (std::int64_t k = 0; k < K; ++k)
          s += get(a, {m, k}) * load_as_double(b.dtype, bytes + (k * N + n) * 4);
        put(c, {m, n}, s);
      }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_matmul_transposed_stride() {
  return std::make_unique<MatmulTransposedStride>();
}

}  // namespace kq::broken::cpu
