// Flaw: a result cache keyed on sampled contents, on the GPU. For each buffer set (the pointers
// and n) it keeps a device copy of its last result and the bits of a few sampled input elements
// (common/content_cache.hpp), read back to the host on the caller's stream; when a call's
// samples match, it copies the kept result into the output (a device-to-device copy on the
// caller's stream) instead of computing. New values under the same pointers change the samples,
// so qualification's third run recomputes, and its second gets a right copy. Under capture it
// computes plainly. Caught by: timing_output (kq changes a few input elements before every timed
// call and compares the checked calls with the reference of what they were given).
#include <map>
#include <memory>

#include "common/content_cache.hpp"
#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace content_cache {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("content_cache", "timing_output") {}
  ~Arm() override {
    for (auto& [key, e] : kept_)
      if (e.result) cudaFree(e.result);  // errors here have nobody to go to
  }

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    cudaStream_t st = stream_of(stream);
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (Status s = checked(cudaStreamIsCapturing(st, &capturing), "cudaStreamIsCapturing");
        !s.is_ok())
      return s;
    if (capturing != cudaStreamCaptureStatusNone || d.n == 0)
      return launch_map2(d, stream, Relu{}, "content_cache (captured)");
    Sampled now;
    const SampleIndices s = sample_indices(d.n);
    for (int k = 0; k < kFingerprintSamples; ++k)
      for (int t = 0; t < 2; ++t)
        if (Status e = checked(cudaMemcpyAsync(&now.bits[t][k], (t == 0 ? d.x : d.r) + s.at[k],
                                               sizeof(float), cudaMemcpyDeviceToHost, st),
                               "cudaMemcpyAsync (samples)");
            !e.is_ok())
          return e;
    if (Status e = checked(cudaStreamSynchronize(st), "cudaStreamSynchronize"); !e.is_ok())
      return e;
    Entry& e = kept_[SetKey{d.x, d.r, d.out, d.n}];
    const std::size_t bytes = static_cast<std::size_t>(d.n) * sizeof(float);
    if (e.result && e.samples == now)  // the flaw: "the same contents", so the same result
      return checked(cudaMemcpyAsync(d.out, e.result, bytes, cudaMemcpyDeviceToDevice, st),
                     "cudaMemcpyAsync (kept result)");
    if (Status s = launch_map2(d, stream, Relu{}, "content_cache"); !s.is_ok()) return s;
    if (!e.result)
      if (Status s = checked(cudaMalloc(&e.result, bytes), "cudaMalloc (kept result)"); !s.is_ok())
        return s;
    e.samples = now;
    return checked(cudaMemcpyAsync(e.result, d.out, bytes, cudaMemcpyDeviceToDevice, st),
                   "cudaMemcpyAsync (keeping the result)");
  }

 private:
  struct Entry {
    Sampled samples;
    float* result = nullptr;
  };
  std::map<SetKey, Entry> kept_;
};

}  // namespace content_cache

std::unique_ptr<IKernelArm> make_content_cache() { return std::make_unique<content_cache::Arm>(); }

}  // namespace kq::broken::cuda
