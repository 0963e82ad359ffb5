// kq_broken_cpu: the CPU candidates that qualification must reject, one flaw each (one file
// each, listed in common/flaws.def). Every arm computes relu(x + residual) (or leaky_relu, for the
// layout flaws) correctly apart from its flaw, and names the check that must catch it in
// expected_rejection.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {

#define KQ_BROKEN_FLAW(flaw) std::unique_ptr<IKernelArm> make_##flaw();
#include "../common/flaws.def"
#undef KQ_BROKEN_FLAW

namespace {

void make_arms(ArmList& out) {
#define KQ_BROKEN_FLAW(flaw) out.push_back(make_##flaw());
#include "../common/flaws.def"
#undef KQ_BROKEN_FLAW
}

}  // namespace
}  // namespace kq::broken::cpu

KQ_EXPORT_ARMS(kq::broken::cpu::make_arms)
