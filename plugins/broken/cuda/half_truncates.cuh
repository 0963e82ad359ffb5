// Flaw: the float result is rounded to half by truncation, toward zero, instead of to nearest
// even: __float2half_rz for f16, and for bf16 the low 16 bits of the float dropped (the "cheap
// conversion" of hand-written bf16 code). Exact results are right; every inexact one lands on
// the smaller neighbour. Caught by: values (the ties class: x plus half an ulp, exactly between
// two neighbours, where nearest even goes up half the time; and most mixed sums).
#include <memory>

#include "half_common.cuh"

namespace kq::broken::cuda {
namespace half_truncates {

struct Flawed {
  template <class E>
  __device__ E operator()(E x, E r) const {
    const float s = relu(fused::Elem<E>::widen(x) + fused::Elem<E>::widen(r));
    if constexpr (std::is_same_v<E, __half>)
      return __float2half_rz(s);
    else
      return __ushort_as_bfloat16(static_cast<unsigned short>(__float_as_uint(s) >> 16));
  }
};

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("half_truncates", "values", Takes::residual_relu_half) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_half(dense_half(in, out), stream, Flawed{}, "half_truncates");
  }
};

}  // namespace half_truncates

std::unique_ptr<IKernelArm> make_half_truncates() {
  return std::make_unique<half_truncates::Arm>();
}

}  // namespace kq::broken::cuda
