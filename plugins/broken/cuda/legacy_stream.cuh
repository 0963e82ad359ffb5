// Flaw: launches its (correct) kernel on the legacy default stream (cudaStreamLegacy, what a launch
// without a stream argument uses) instead of the stream kq passed to run(), and waits for it there
// before returning. Its output is complete when run() returns, so no value check can tell; but the
// work is invisible to the caller's stream: events kq records on it time nothing, work queued after
// it does not wait for it, and a graph captured from it is empty. (The wait keeps the output from
// racing with the host's copies, which would otherwise let values or repeat_differs catch it first,
// depending on timing.) Caught by: wrong_stream (CUPTI sees a kernel on a stream other than the
// caller's).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace legacy_stream {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("legacy_stream", "wrong_stream") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    void* wrong = cudaStreamLegacy;  // the flaw: not the caller's stream
    if (Status s = launch_map2(dense2(in, out), wrong, Relu{}, "legacy_stream"); !s.is_ok())
      return s;
    return checked(cudaStreamSynchronize(stream_of(wrong)), "cudaStreamSynchronize");
  }
};

}  // namespace legacy_stream

std::unique_ptr<IKernelArm> make_legacy_stream() { return std::make_unique<legacy_stream::Arm>(); }

}  // namespace kq::broken::cuda
