// A plugin whose one arm, test_crash_when_timed, computes out = x right on every case
// qualification gives it, then aborts the process when timed at 12345 elements (`kq run --sizes
// 12345`): the timing worker dies, and kq run must say so. Qualification has a case at that size
// too (timing/12345, since timed sizes are qualified), where it runs a few times; timing's
// warm-up alone runs it hundreds of times: it aborts from its 21st call at that size on.
#include <cstdlib>
#include <memory>

#include "kq/contract.hpp"
#include "kq/export.hpp"
#include "test_arm.hpp"

namespace {

class CrashWhenTimed final : public kq_test::ScaleArm {
 public:
  CrashWhenTimed() : ScaleArm("test_crash_when_timed", 1.0f) {}

  kq::Status prepare(const kq::Problem& problem) override {
    if (problem.spec == nullptr) return kq::Status::error("prepare: no spec");
    spec_ = *problem.spec;
    kq::Status s = kq::check_contract(spec_, problem.inputs, problem.outputs, kq::Device::cpu);
    return s.is_ok() ? ScaleArm::prepare(problem) : s;
  }

  kq::Status run(std::span<const kq::TensorView> inputs, std::span<const kq::TensorView> outputs,
                 void* stream) override {
    kq::Status s = kq::check_contract(spec_, inputs, outputs, kq::Device::cpu);
    if (!s.is_ok()) return s;
    if (!outputs.empty() && outputs[0].numel() == 12345 && ++calls_at_12345_ > 20) std::abort();
    return ScaleArm::run(inputs, outputs, stream);
  }

 private:
  kq::OpSpec spec_;
  int calls_at_12345_ = 0;
};

}  // namespace

static void make_arms(kq::ArmList& out) { out.push_back(std::make_unique<CrashWhenTimed>()); }
KQ_EXPORT_ARMS(make_arms)
