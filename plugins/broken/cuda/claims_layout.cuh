// Flaw: never checks the contract. It walks any view with its strides (so it computes the right
// numbers even for strided, broadcast or rank-5 views) and returns ok, where the spec says
// those calls are outside the contract and must be refused; a partially overlapping output it
// computes with garbage. Caught by: accepted_out_of_contract (rank/2x3x1x5x7, layout/...).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace claims_layout {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("claims_layout", "accepted_out_of_contract") {}

 protected:
  bool checks_contract() const override { return false; }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const TensorView views[3] = {out[0], in[0], in[1]};
    for (const TensorView& v : views) {
      if (v.rank != views[0].rank) return Status::error("tensors of different ranks");
      for (int d = 0; d < v.rank; ++d)
        if (v.shape[d] != views[0].shape[d]) return Status::error("tensors of different shapes");
    }
    const std::int64_t n = out[0].numel();
    relu_sum_strided<<<blocks_for(n), kThreads, 0, stream_of(stream)>>>(
        strided(views, 3), static_cast<const float*>(in[0].data),
        static_cast<const float*>(in[1].data), static_cast<float*>(out[0].data), n);
    return launched("claims_layout");
  }
};

}  // namespace claims_layout

std::unique_ptr<IKernelArm> make_claims_layout() { return std::make_unique<claims_layout::Arm>(); }

}  // namespace kq::broken::cuda
