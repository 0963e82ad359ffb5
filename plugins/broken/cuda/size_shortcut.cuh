// Flaw: a shortcut taken only at sizes the old qualification never visited: when n is a power
// of two of at least 65536 elements (the usual timing sizes; qualification's own size cases are
// odd), only the first half of the elements is computed, the rest left as they were.
// Caught by: values (qualification's timing/<n> cases, which run every timing size of the
// spec), or timing_output (the timing loop checks the output it times).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace size_shortcut {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("size_shortcut", "values|timing_output") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    Dense2 d = dense2(in, out);
    if (d.n >= 65536 && (d.n & (d.n - 1)) == 0) d.n /= 2;  // the flaw
    return launch_map2(d, stream, Relu{}, "size_shortcut");
  }
};

}  // namespace size_shortcut

std::unique_ptr<IKernelArm> make_size_shortcut() { return std::make_unique<size_shortcut::Arm>(); }

}  // namespace kq::broken::cuda
