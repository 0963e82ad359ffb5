// Flaw: remembers the result of the last call and replays it when called again with the same
// pointers and size, assuming the data behind them did not change.
// Caught by: new_values (the same pointers, new inputs).
#include <cstring>
#include <memory>
#include <vector>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class PointerCache final : public CpuArm {
 public:
  PointerCache() : CpuArm("pointer_cache", "new_values") {}

 protected:
  Status on_prepare(const Problem& p) override {
    valid_ = false;
    const std::int64_t n = p.outputs[0].numel();
    cache_.assign(n <= kMaxCached ? static_cast<std::size_t>(n) : 0, 0.0f);
    return Status::ok();
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    const Key key{x, r, o, n};
    if (valid_ && key == key_) {
      std::memcpy(o, cache_.data(), static_cast<std::size_t>(n) * sizeof(float));
      return Status::ok();
    }
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    if (static_cast<std::int64_t>(cache_.size()) == n) {
      std::memcpy(cache_.data(), o, static_cast<std::size_t>(n) * sizeof(float));
      key_ = key;
      valid_ = true;
    }
    return Status::ok();
  }

 private:
  static constexpr std::int64_t kMaxCached = std::int64_t{1} << 22;
  struct Key {
    const void *x, *r, *out;
    std::int64_t n;
    bool operator==(const Key&) const = default;
  };
  Key key_{};
  bool valid_ = false;
  std::vector<float> cache_;
};

}  // namespace

std::unique_ptr<IKernelArm> make_pointer_cache() { return std::make_unique<PointerCache>(); }

}  // namespace kq::broken::cpu
