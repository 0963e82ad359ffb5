// Flaw: a result cache keyed on sampled contents. For each buffer set (the pointers and n) it
// keeps a copy of its last result and the bits of a few sampled input elements
// (common/content_cache.hpp); when a call's samples match, it copies the kept result into the
// output instead of computing. New values under the same pointers change the samples, so
// qualification's third run (new inputs) recomputes, and its second (the same inputs, another
// poison) gets a right copy. Timed on unchanging inputs it would be right every time. Caught by:
// timing_output (kq changes a few input elements before every timed call, where a sample seldom
// looks, and compares the checked calls with the reference of what they were given).
#include <map>
#include <memory>
#include <vector>

#include "common/content_cache.hpp"
#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class ContentCache final : public CpuArm {
 public:
  ContentCache() : CpuArm("content_cache", "timing_output") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    Sampled now;
    const SampleIndices s = sample_indices(n);
    for (int k = 0; k < kFingerprintSamples && n > 0; ++k) {
      std::memcpy(&now.bits[0][k], x + s.at[k], sizeof(float));
      std::memcpy(&now.bits[1][k], r + s.at[k], sizeof(float));
    }
    Entry& e = kept_[SetKey{x, r, o, n}];
    if (e.valid && e.samples == now) {  // the flaw: "the same contents", so the same result
      std::memcpy(o, e.result.data(), static_cast<std::size_t>(n) * sizeof(float));
      return Status::ok();
    }
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    e.result.assign(o, o + n);
    e.samples = now;
    e.valid = true;
    return Status::ok();
  }

 private:
  struct Entry {
    bool valid = false;
    Sampled samples;
    std::vector<float> result;
  };
  std::map<SetKey, Entry> kept_;
};

}  // namespace

std::unique_ptr<IKernelArm> make_content_cache() { return std::make_unique<ContentCache>(); }

}  // namespace kq::broken::cpu
