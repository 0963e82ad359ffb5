// Flaw: a data race. Two threads split the elements at h = n / 2; the helper, which owns
// [h, n), first stages x[h - 1] into out[h - 1] (an off-by-one in its range start) after a
// short random delay, while the calling thread writes the right value there. The final value
// depends on which write lands last: small problems nearly always keep the stale one, large
// ones usually the right one. Caught by: values, or repeat_differs when a first run got lucky.
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class Race final : public CpuArm {
 public:
  Race() : CpuArm("race", "values|repeat_differs") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    auto [x, r, o, n] = dense2(in, out);
    if (n < 2) {
      o[0] = relu(x[0] + r[0]);
      return Status::ok();
    }
    const std::int64_t h = n / 2;
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(5, 25)(rng_));
    // Both threads store to out[h - 1] through atomic_ref: racy in outcome, not undefined.
    std::thread helper([=] {
      const auto until = std::chrono::steady_clock::now() + delay;
      while (std::chrono::steady_clock::now() < until) {
      }
      std::atomic_ref<float>(o[h - 1]).store(x[h - 1], std::memory_order_relaxed);  // stale
      for (std::int64_t i = h; i < n; ++i) o[i] = relu(x[i] + r[i]);
    });
    for (std::int64_t i = 0; i < h - 1; ++i) o[i] = relu(x[i] + r[i]);
    std::atomic_ref<float>(o[h - 1]).store(relu(x[h - 1] + r[h - 1]), std::memory_order_relaxed);
    helper.join();
    return Status::ok();
  }

 private:
  std::minstd_rand rng_{
      static_cast<std::uint_fast32_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
};

}  // namespace

std::unique_ptr<IKernelArm> make_race() { return std::make_unique<Race>(); }

}  // namespace kq::broken::cpu
