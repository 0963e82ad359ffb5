// A plugin whose one arm, test_delayed, computes out = x right, then busy-waits for
// KQ_TEST_DELAY_US microseconds (read once, when the plugin makes its arm; 0 when unset): a
// planted slowdown of a known size for tests/integration/test_compare_runs_cli.cpp. A
// busy-wait on the steady clock, not a sleep: it takes the same time on every call, where a
// sleep's wake-up depends on the scheduler. Qualifies on tests/data/specs/copy.yaml.
#include <chrono>
#include <cstdlib>
#include <memory>

#include "kq/contract.hpp"
#include "kq/export.hpp"
#include "test_arm.hpp"

namespace {

class Delayed final : public kq_test::ScaleArm {
 public:
  explicit Delayed(std::chrono::microseconds delay)
      : ScaleArm("test_delayed", 1.0f), delay_(delay) {}

  kq::Status prepare(const kq::Problem& problem) override {
    if (problem.spec == nullptr) return kq::Status::error("prepare: no spec");
    spec_ = *problem.spec;
    kq::Status s = kq::check_contract(spec_, problem.inputs, problem.outputs, kq::Device::cpu);
    return s.is_ok() ? ScaleArm::prepare(problem) : s;
  }

  kq::Status run(std::span<const kq::TensorView> inputs, std::span<const kq::TensorView> outputs,
                 void* stream) override {
    const auto start = std::chrono::steady_clock::now();
    kq::Status s = kq::check_contract(spec_, inputs, outputs, kq::Device::cpu);
    if (!s.is_ok()) return s;
    s = ScaleArm::run(inputs, outputs, stream);
    while (std::chrono::steady_clock::now() - start < delay_) {
    }
    return s;
  }

 private:
  kq::OpSpec spec_;
  std::chrono::microseconds delay_;
};

std::chrono::microseconds delay_from_env() {
  const char* v = std::getenv("KQ_TEST_DELAY_US");
  return std::chrono::microseconds(v != nullptr ? std::atoll(v) : 0);
}

}  // namespace

static void make_arms(kq::ArmList& out) {
  out.push_back(std::make_unique<Delayed>(delay_from_env()));
}
KQ_EXPORT_ARMS(make_arms)
