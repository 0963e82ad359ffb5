// Flaw: an off-by-one bound (i <= n) makes one thread write a zero one element past the end of
// the output. Caught by: output_guard (the guard zone after the output changes), or by
// cuda_error (illegal address) when the output ends right before unmapped memory
// (fence/out_end): whichever case comes first.
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace writes_past_end {

__global__ void writes_past_end(const float* __restrict__ x, const float* __restrict__ r,
                                float* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = global_thread(); i <= n; i += grid_threads())  // the flaw: <=
    out[i] = i < n ? relu(x[i] + r[i]) : 0.0f;
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("writes_past_end", "output_guard|cuda_error") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    writes_past_end<<<blocks_for(d.n + 1), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n);
    return launched("writes_past_end");
  }
};

}  // namespace writes_past_end

std::unique_ptr<IKernelArm> make_writes_past_end() {
  return std::make_unique<writes_past_end::Arm>();
}

}  // namespace kq::broken::cuda
