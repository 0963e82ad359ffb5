// Flaw: a data race between blocks. Block b owns the chunk [begin, end) but, after its own
// work and a short sleep, its thread 0 also "stages" element end (its neighbour's first) with
// the unfinished value x[end], while the neighbour block writes the right value there. Which
// write lands last depends on scheduling: when both blocks are resident at once (small
// grids), nearly always the stale one. Caught by: values, or repeat_differs when a first run
// got lucky.
#include <algorithm>
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace race {

__global__ void race(const float* __restrict__ x, const float* __restrict__ r, float* out,
                     std::int64_t n, std::int64_t chunk) {
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * chunk;
  const std::int64_t end = begin + chunk < n ? begin + chunk : n;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) out[i] = relu(x[i] + r[i]);
  if (threadIdx.x == 0 && end < n) {
    __nanosleep(2000);
    out[end] = x[end];  // the flaw: one past the block's range, stale
  }
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("race", "values|repeat_differs") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    // At most 1024 blocks (all resident at once on an H100/H200), chunks of at least 32.
    const std::int64_t chunk = std::max<std::int64_t>(32, (d.n + 1023) / 1024);
    const auto blocks = static_cast<unsigned>((d.n + chunk - 1) / chunk);
    race<<<blocks, kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n, chunk);
    return launched("race");
  }
};

}  // namespace race

std::unique_ptr<IKernelArm> make_race() { return std::make_unique<race::Arm>(); }

}  // namespace kq::broken::cuda
