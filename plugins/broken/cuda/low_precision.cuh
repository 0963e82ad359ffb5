// Flaw: computes in half precision (11 significant bits, a range up to 65504): inputs and sum
// rounded to __half. Caught by: values (any positive sum).
// It shows on some elements only (it depends on the sum's sign); the value checks of the
// first or the third run (new inputs) catch it.
#include <memory>

#include <cuda_fp16.h>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace low_precision {

struct Flawed {
  __device__ float operator()(float x, float r) const {
    return relu(__half2float(__hadd(__float2half_rn(x), __float2half_rn(r))));
  }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("low_precision", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Flawed{}, "low_precision");
  }
};

}  // namespace low_precision

std::unique_ptr<IKernelArm> make_low_precision() { return std::make_unique<low_precision::Arm>(); }

}  // namespace kq::broken::cuda
