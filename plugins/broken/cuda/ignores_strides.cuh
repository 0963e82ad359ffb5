// Flaw: walks every view as if its rows were dense: the outer strides are honoured, the innermost
// one is taken to be 1. Right on contiguous views; leaky_relu's contract admits strided ones.
// (Ignoring the outer strides as well would read past the end of a broadcast view's memory.)
// Caught by: values (layout/x_stride2, the first strided case).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace ignores_strides {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("ignores_strides", "values", Takes::leaky_relu) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const TensorView views[2] = {out[0], in[0]};
    Strided s = strided(views, 2);
    for (auto& st : s.stride) st[s.rank - 1] = 1;  // the flaw
    const std::int64_t n = out[0].numel();
    leaky_strided<<<blocks_for(n), kThreads, 0, stream_of(stream)>>>(
        s, static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
    return launched("ignores_strides");
  }
};

}  // namespace ignores_strides

std::unique_ptr<IKernelArm> make_ignores_strides() {
  return std::make_unique<ignores_strides::Arm>();
}

}  // namespace kq::broken::cuda
