// Flaw: refuses pointers that are not 16-byte aligned (a float4 kernel without its scalar
// fallback), though the spec admits 4-byte alignment. Caught by: refused_in_contract
// (offset/x+4...).
#include <memory>

#include "common/aligned_16.hpp"
#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace refuses_unaligned {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("refuses_unaligned", "refused_in_contract") {}

 protected:
  Status on_prepare(const Problem& p) override { return aligned_16(p.inputs, p.outputs); }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    if (Status s = aligned_16(in, out); !s.is_ok()) return s;
    const Dense2 d = dense2(in, out);
    relu_sum_vec4<<<blocks_for(d.n / 4 + 1), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out,
                                                                               d.n);
    return launched("refuses_unaligned");
  }
};

}  // namespace refuses_unaligned

std::unique_ptr<IKernelArm> make_refuses_unaligned() {
  return std::make_unique<refuses_unaligned::Arm>();
}

}  // namespace kq::broken::cuda
