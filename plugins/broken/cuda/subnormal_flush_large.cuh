// Flaw: a "fast path" for big tensors: from 2^20 elements on, the addition flushes subnormals
// to zero (ReluOfFtzSum, cuda_common.cuh: add.rn.ftz.f32, keeping the sign: subnormal inputs read
// as zero and subnormal sums flush); below that the arm is exact. Caught by: values (the size cases
// from 4096 elements on carry subnormals, and size/1048579 runs with --quick too).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace subnormal_flush_large {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("subnormal_flush_large", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    if (d.n < kLarge) return launch_map2(d, stream, Relu{}, "subnormal_flush_large");
    return launch_map2(d, stream, ReluOfFtzSum{}, "subnormal_flush_large (fast path)");
  }

 private:
  static constexpr std::int64_t kLarge = std::int64_t{1} << 20;
};

}  // namespace subnormal_flush_large

std::unique_ptr<IKernelArm> make_subnormal_flush_large() {
  return std::make_unique<subnormal_flush_large::Arm>();
}

}  // namespace kq::broken::cuda
