// Flaw: each thread also loads x[i + 1] (a neighbour "prefetch" that is never bounds-checked),
// so the thread of the last element reads x[n]. The value is not used (the results are right)
// and the read lands in mapped memory in every case but one: when x ends right before an
// unmapped range (fence/x_end) it is an illegal address. Caught by: cuda_error.
#include <cmath>
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace reads_past_end {

__global__ void reads_past_end(const float* __restrict__ x, const float* __restrict__ r,
                               float* __restrict__ out, std::int64_t n, float nan) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    // volatile, and "used" in a comparison with a NaN the compiler cannot see (a parameter), which
    // is never true: neither nvcc nor ptxas may drop the load, and the result does not change.
    const float ahead = *static_cast<const volatile float*>(x + i + 1);  // x[n] for i = n - 1
    const float v = relu(x[i] + r[i]);
    out[i] = ahead == nan ? ahead : v;
  }
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("reads_past_end", "cuda_error") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    reads_past_end<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n,
                                                                        std::nanf(""));
    return launched("reads_past_end");
  }
};

}  // namespace reads_past_end

std::unique_ptr<IKernelArm> make_reads_past_end() {
  return std::make_unique<reads_past_end::Arm>();
}

}  // namespace kq::broken::cuda
