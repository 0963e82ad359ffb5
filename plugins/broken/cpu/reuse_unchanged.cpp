// Flaw: skips the work when nothing seems to have changed. It fingerprints the call (the
// pointers, n and a few sampled input elements, common/fingerprint.hpp) and, when the same
// fingerprint was seen on the two calls before, returns ok without computing or writing
// anything, assuming the output still holds its result: the trick that fooled evaluators which
// time the same call on the same buffers and check only the first output.
// Caught by: timing_output (the timing loop re-poisons the output before each sample and
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
    seen_ = 0;
    last_ = Fingerprint{};
    return Status::ok();
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    const Fingerprint fp = fingerprint(x, r, o, n);
    // The earlier calls in a row with this fingerprint (counted up to 2, all that matters).
    seen_ = same(fp, last_) ? std::min(seen_ + 1, 2) : 0;
    last_ = fp;
    if (seen_ >= 2) return Status::ok();  // the flaw: "unchanged", so the output must be right
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

  Fingerprint last_;
  int seen_ = 0;
};

}  // namespace

std::unique_ptr<IKernelArm> make_reuse_unchanged() { return std::make_unique<ReuseUnchanged>(); }

}  // namespace kq::broken::cpu
