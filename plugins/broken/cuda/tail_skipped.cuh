// Flaw: the n % 4 elements after the last group of four are never written (a vector kernel
// without its scalar tail). Caught by: values (size/1, size/1025...: the poison stays).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace tail_skipped {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("tail_skipped", "values") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    Dense2 d = dense2(in, out);
    d.n -= d.n % 4;  // the flaw
    if (d.n == 0) return Status::ok();
    return launch_map2(d, stream, Relu{}, "tail_skipped");
  }
};

}  // namespace tail_skipped

std::unique_ptr<IKernelArm> make_tail_skipped() { return std::make_unique<tail_skipped::Arm>(); }

}  // namespace kq::broken::cuda
