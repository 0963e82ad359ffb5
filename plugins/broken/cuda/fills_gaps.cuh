// Flaw: clears the whole memory span of a strided output before writing its elements, so the
// gaps between them (which belong to the caller) are overwritten with zeros. leaky_relu's
// contract admits strided outputs. Caught by: output_gaps (layout/out_stride2).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace fills_gaps {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("fills_gaps", "output_gaps", Takes::leaky_relu) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    // Not when the output is the input (in place): clearing would destroy the input first.
    if (!out[0].is_contiguous() && !overlaps(out[0], in[0])) {
      auto [lo, hi] = byte_range(out[0]);
      Status s =
          checked(cudaMemsetAsync(reinterpret_cast<void*>(lo), 0, hi - lo, stream_of(stream)),
                  "cudaMemsetAsync");  // the flaw: gaps included
      if (!s.is_ok()) return s;
    }
    const TensorView views[2] = {out[0], in[0]};
    const std::int64_t n = out[0].numel();
    leaky_strided<<<blocks_for(n), kThreads, 0, stream_of(stream)>>>(
        strided(views, 2), static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data),
        n);
    return launched("fills_gaps");
  }
};

}  // namespace fills_gaps

std::unique_ptr<IKernelArm> make_fills_gaps() { return std::make_unique<fills_gaps::Arm>(); }

}  // namespace kq::broken::cuda
