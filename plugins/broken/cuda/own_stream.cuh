// Flaw: creates a stream of its own (non-blocking, once, in prepare()) and launches its
// (correct) kernel there, never making the caller's stream wait for it (no event joins the
// two); it waits for its own stream before returning. Its output is complete when run()
// returns, so no value check can tell; but the work is invisible to the caller's stream: events
// kq records on it time nothing, work queued after it does not wait for it, and a graph
// captured from it is empty. (The wait keeps the output from racing with the host's copies, as
// late_work's does, which would let values or repeat_differs catch it first.)
// Caught by: wrong_stream (CUPTI sees a kernel on a stream other than the caller's, not joined
// back to it).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace own_stream {

class Arm final : public OwnStreamArm {
 public:
  Arm() : OwnStreamArm("own_stream", "wrong_stream") {}

 protected:
  Status compute_on(std::span<const TensorView> in, std::span<const TensorView> out,
                    cudaStream_t own) override {
    if (Status s = launch_map2(dense2(in, out), own, Relu{}, "own_stream"); !s.is_ok()) return s;
    return checked(cudaStreamSynchronize(own), "cudaStreamSynchronize");
  }
};

}  // namespace own_stream

std::unique_ptr<IKernelArm> make_own_stream() { return std::make_unique<own_stream::Arm>(); }

}  // namespace kq::broken::cuda
