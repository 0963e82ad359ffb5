// Flaw: its prepare() starts a thread of its own that launches small kernels on a stream of its
// own, one after another, for as long as the arm lives; its calls compute correctly on the
// caller's stream. The thread's work lands in every other arm's calls too: in a worker shared with
// them, it slows them and, seen by CUPTI during their calls, used to get them rejected for work
// they never launched. Caught by: outside_work (in its own qualification worker, CUPTI names the
// thread that launched each kernel of the profiled call; work from another thread is the
// worker's, here this arm's).
#include <atomic>
#include <memory>
#include <thread>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace background_work {

__global__ void busy(float* scratch) { scratch[threadIdx.x] += 1.0f; }

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("background_work", "outside_work") {}
  ~Arm() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (stream_) cudaStreamDestroy(stream_);  // errors here have nobody to go to
    if (scratch_) cudaFree(scratch_);
  }

 protected:
  Status on_prepare(const Problem&) override {
    if (thread_.joinable()) return Status::ok();
    if (Status s = checked(cudaMalloc(&scratch_, 32 * sizeof(float)), "cudaMalloc"); !s.is_ok())
      return s;
    if (Status s =
            checked(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        !s.is_ok())
      return s;
    int device = 0;
    if (Status s = checked(cudaGetDevice(&device), "cudaGetDevice"); !s.is_ok()) return s;
    // The flaw: work of its own, between and during everyone's calls.
    thread_ = std::thread([this, device] {
      cudaSetDevice(device);
      for (unsigned k = 1; !stop_; ++k) {
        busy<<<1, 32, 0, stream_>>>(scratch_);
        if (k % 64 == 0) cudaStreamSynchronize(stream_);  // a queue of its own, never full
      }
      cudaStreamSynchronize(stream_);
    });
    return Status::ok();
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    return launch_map2(dense2(in, out), stream, Relu{}, "background_work");
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
  cudaStream_t stream_ = nullptr;
  float* scratch_ = nullptr;
};

}  // namespace background_work

std::unique_ptr<IKernelArm> make_background_work() {
  return std::make_unique<background_work::Arm>();
}

}  // namespace kq::broken::cuda
