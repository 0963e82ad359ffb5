// Flaw: loads and stores float4 through the caller's pointers without checking that they are
// 16-byte aligned; the spec promises 4. A misaligned vector access is a sticky CUDA error.
// Caught by: cuda_error (misaligned address, offset/x+4...).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace assumes_alignment {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("assumes_alignment", "cuda_error") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    relu_sum_vec4<<<blocks_for(d.n / 4 + 1), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out,
                                                                               d.n);
    return launched("assumes_alignment");
  }
};

}  // namespace assumes_alignment

std::unique_ptr<IKernelArm> make_assumes_alignment() {
  return std::make_unique<assumes_alignment::Arm>();
}

}  // namespace kq::broken::cuda
