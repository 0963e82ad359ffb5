// Flaw: does nothing while its stream is being captured into a CUDA graph (it "cannot be
// captured", so it returns ok without enqueuing anything); run directly it is correct. A graph
// of its call is empty, and replaying it leaves the output as it was.
// Caught by: graph_output (a call captured on a poisoned output, replayed and compared).
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace empty_capture {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("empty_capture", "graph_output") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (Status s =
            checked(cudaStreamIsCapturing(stream_of(stream), &capture), "cudaStreamIsCapturing");
        !s.is_ok())
      return s;
    if (capture != cudaStreamCaptureStatusNone) return Status::ok();  // the flaw
    return launch_map2(dense2(in, out), stream, Relu{}, "empty_capture");
  }
};

}  // namespace empty_capture

std::unique_ptr<IKernelArm> make_empty_capture() { return std::make_unique<empty_capture::Arm>(); }

}  // namespace kq::broken::cuda
