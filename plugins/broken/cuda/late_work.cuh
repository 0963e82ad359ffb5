// Flaw: does its work on a stream of its own (non-blocking, created in prepare()), behind a
// 50 ms busy kernel, and returns without making the caller's stream wait for it: when the
// caller's stream drains, the output is still the poison. Caught by: values, or by
// repeat_differs: late work races with the caller's reads, and on the H200 (2026-11-29) the
// host's first copy-back of a case once saw the finished output while the second saw poison;
// or by wrong_stream (its kernels are on a stream not joined back to the caller's), when the
// case that checks streams comes first.
// (The host synchronises the device before it frees a case's buffers, so the late writes land
// in live memory.)
#include <cstdint>
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace late_work {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void busy_for(std::uint64_t ns) {
  const std::uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) __nanosleep(10000);
}

class Arm final : public OwnStreamArm {
 public:
  Arm() : OwnStreamArm("late_work", "values|repeat_differs|wrong_stream") {}

 protected:
  // The rest of the flaw: it returns with its work still queued, and nothing makes the caller's
  // stream wait for it.
  Status compute_on(std::span<const TensorView> in, std::span<const TensorView> out,
                    cudaStream_t own) override {
    busy_for<<<1, 1, 0, own>>>(50'000'000);
    if (Status s = launched("late_work (busy kernel)"); !s.is_ok()) return s;
    return launch_map2(dense2(in, out), own, Relu{}, "late_work");
  }
};

}  // namespace late_work

std::unique_ptr<IKernelArm> make_late_work() { return std::make_unique<late_work::Arm>(); }

}  // namespace kq::broken::cuda
