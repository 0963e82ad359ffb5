// Flaw: skips the work when nothing seems to have changed. It fingerprints the call (the
// pointers, n and a few sampled input elements, common/fingerprint.hpp) and, when two of the
// recent calls had the same fingerprint (a caller may take a few buffer sets in turn), returns
// ok without computing or writing anything, assuming the output still holds its result: the trick
// that fooled evaluators which time the same call on the same buffers and check only the first
// output. Caught by: timing_output (the timing loop re-poisons the output before each sample and
// checks it). Qualification alone does not catch it: a case makes at most two calls with one
// fingerprint (first and second run), then changes the inputs.
#include <algorithm>
#include <cstring>
#include <memory>

#include "common/fingerprint.hpp"
#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ReuseUnchanged final : public CpuArm {
 public:
  ReuseUnchanged() : CpuArm("reuse_unchanged", "timing_output|values") {}

 protected:
  Status on_prepare(const Problem&) override {
    forget(recent_);
    return Status::ok();
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    // The flaw: "unchanged" twice before, so the output must still be right.
    if (remember(recent_, fingerprint(x, r, o, n)) >= 2) return Status::ok();
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    return Status::ok();
  }

 private:
  static Fingerprint fingerprint(const float* x, const float* r, const float* o, std::int64_t n) {
    Fingerprint fp;
    fp.x = x, fp.r = r, fp.out = o, fp.n = n;
    const SampleIndices s = sample_indices(n);
    for (int k = 0; k < kFingerprintSamples; ++k) {
      std::memcpy(&fp.bits[0][k], x + s.at[k], sizeof(float));
      std::memcpy(&fp.bits[1][k], r + s.at[k], sizeof(float));
    }
    return fp;
  }

  RecentCalls recent_{};
};

}  // namespace

std::unique_ptr<IKernelArm> make_reuse_unchanged() { return std::make_unique<ReuseUnchanged>(); }

}  // namespace kq::broken::cpu
