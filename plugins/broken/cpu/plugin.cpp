// kq_broken_cpu: the CPU candidates that qualification must reject, one flaw each (one file
// each, listed in common/flaws.def, and those that exist on the CPU alone in
// common/flaws_cpu.def). Every arm computes relu(x + residual) (or leaky_relu, for the layout
// flaws; or a half spec's expression, cpu/half_arm.hpp) correctly apart from its flaw, and names
// the check that must catch it in expected_rejection.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {

#define KQ_BROKEN_FAMILY_FLAWS "cpu/all_flaws.def"
#include "common/make_arms.inc"

}  // namespace kq::broken::cpu

KQ_EXPORT_ARMS(kq::broken::cpu::make_arms)
