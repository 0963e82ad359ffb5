// Flaw: remembers the result of the last call and replays it when called again with the same
// pointers and size, assuming the data behind them did not change.
// Caught by: new_values (the same pointers, new inputs).
#include <cstring>
#include <memory>
#include <vector>

#include "common/last_call.hpp"
#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class PointerCache final : public CpuArm {
 public:
  PointerCache() : CpuArm("pointer_cache", "new_values") {}

 protected:
  Status on_prepare(const Problem& p) override {
    last_.forget();
    const std::int64_t n = p.outputs[0].numel();
    cache_.assign(n <= kMaxCached ? static_cast<std::size_t>(n) : 0, 0.0f);
    return Status::ok();
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    const Dense2 d = dense2(in, out);
    const std::size_t bytes = static_cast<std::size_t>(d.n) * sizeof(float);
    if (last_.same(d)) {  // the flaw: the pointers are the same, the data need not be
      std::memcpy(d.out, cache_.data(), bytes);
      return Status::ok();
    }
    for (std::int64_t i = 0; i < d.n; ++i) d.out[i] = relu(d.x[i] + d.r[i]);
    if (static_cast<std::int64_t>(cache_.size()) == d.n) {
      std::memcpy(cache_.data(), d.out, bytes);
      last_.remember(d);
    }
    return Status::ok();
  }

 private:
  LastCall last_;
  std::vector<float> cache_;
};

}  // namespace

std::unique_ptr<IKernelArm> make_pointer_cache() { return std::make_unique<PointerCache>(); }

}  // namespace kq::broken::cpu
