// Flaw: skips the work when nothing seems to have changed. A one-thread kernel fingerprints the
// call on the device (the pointers, n and a few sampled input elements, common/fingerprint.hpp),
// looks it up among the recent calls' fingerprints, kept in device memory (a caller may take a few
// buffer sets in turn), and sets a skip flag when two of them had it; the main kernel returns at
// once when the flag is set, leaving whatever the output holds: the trick that fooled evaluators
// which time the same call on the same buffers and check only the first output. Everything runs on
// the caller's stream, with no host synchronisation. Under graph capture it computes plainly, so
// that a captured graph replays right: a cheat that knows graphs are checked. Caught by:
// timing_output (the timing loop re-poisons the output after each sample and checks a random
// subset); graph_output and values are declared in case a replay or a value check meets the skip
// first. Qualification's value checks alone do not catch it: a case makes at most two calls with
// one fingerprint (first and second run), then changes the inputs.
#include <memory>

#include "common/fingerprint.hpp"
#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace reuse_unchanged {

struct State {
  RecentCalls recent;
  int skip;
};

__global__ void fingerprint_step(const float* x, const float* r, const float* out, std::int64_t n,
                                 SampleIndices s, State* st, int reset) {
  Fingerprint fp;
  fp.x = x, fp.r = r, fp.out = out, fp.n = n;
  for (int k = 0; k < kFingerprintSamples; ++k) {
    fp.bits[0][k] = __float_as_uint(x[s.at[k]]);
    fp.bits[1][k] = __float_as_uint(r[s.at[k]]);
  }
  if (reset) forget(st->recent);
  st->skip = remember(st->recent, fp) >= 2;  // the flaw: "unchanged", so the output is right
}

__global__ void relu_unless_skipped(const float* __restrict__ x, const float* __restrict__ r,
                                    float* __restrict__ out, std::int64_t n, const State* st) {
  if (st != nullptr && st->skip) return;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = relu(x[i] + r[i]);
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("reuse_unchanged", "timing_output|graph_output|values") {}
  ~Arm() override {
    if (state_) cudaFree(state_);  // errors here have nobody to go to
  }

 protected:
  // Allocates the device state once (no copy or memset here: all device work goes on the
  // caller's stream, in run()); the first call after each prepare() resets it.
  Status on_prepare(const Problem&) override {
    fresh_ = true;
    if (state_) return Status::ok();
    return checked(cudaMalloc(&state_, sizeof(State)), "cudaMalloc (fingerprint)");
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (Status s =
            checked(cudaStreamIsCapturing(stream_of(stream), &capturing), "cudaStreamIsCapturing");
        !s.is_ok())
      return s;
    if (capturing != cudaStreamCaptureStatusNone) {  // a graph: do the work, every replay
      relu_unless_skipped<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n,
                                                                               nullptr);
      return launched("reuse_unchanged (captured)");
    }
    const int reset = fresh_ ? 1 : 0;
    fresh_ = false;
    fingerprint_step<<<1, 1, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n, sample_indices(d.n),
                                                     state_, reset);
    if (Status s = launched("reuse_unchanged (fingerprint)"); !s.is_ok()) return s;
    relu_unless_skipped<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n,
                                                                             state_);
    return launched("reuse_unchanged");
  }

 private:
  State* state_ = nullptr;
  bool fresh_ = true;
};

}  // namespace reuse_unchanged

std::unique_ptr<IKernelArm> make_reuse_unchanged() {
  return std::make_unique<reuse_unchanged::Arm>();
}

}  // namespace kq::broken::cuda
