// Flaw: the addition flushes subnormals to zero (ReluOfFtzSum in cuda_common.cuh: add.ftz.f32,
// what -ftz=true or --use_fast_math compile every f32 operation to): subnormal inputs read as
// zero and subnormal sums flush. Caught by: values (values/denormal).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace flush_to_zero {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("flush_to_zero", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, ReluOfFtzSum{}, "flush_to_zero");
  }
};

}  // namespace flush_to_zero

std::unique_ptr<IKernelArm> make_flush_to_zero() { return std::make_unique<flush_to_zero::Arm>(); }

}  // namespace kq::broken::cuda
