// Flaw: launches its (correct) kernel on the per-thread default stream (cudaStreamPerThread, what
// --default-stream per-thread makes of a launch without a stream argument) instead of the stream kq
// passed to run(), and waits for it there before returning. Its output is complete when run()
// returns, so no value check can tell; but the work is invisible to the caller's stream: events kq
// records on it time nothing, work queued after it does not wait for it, and a graph captured from
// it is empty. (The wait keeps the output from racing with the host's copies, which would otherwise
// let values or repeat_differs catch it first, depending on timing.)
// Caught by: wrong_stream (CUPTI sees a kernel on a stream other than the caller's).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace per_thread_stream {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("per_thread_stream", "wrong_stream") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    void* wrong = cudaStreamPerThread;  // the flaw: not the caller's stream
    if (Status s = launch_map2(dense2(in, out), wrong, Relu{}, "per_thread_stream"); !s.is_ok())
      return s;
    return checked(cudaStreamSynchronize(stream_of(wrong)), "cudaStreamSynchronize");
  }
};

}  // namespace per_thread_stream

std::unique_ptr<IKernelArm> make_per_thread_stream() {
  return std::make_unique<per_thread_stream::Arm>();
}

}  // namespace kq::broken::cuda
