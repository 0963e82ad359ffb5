// kq_broken_cpu: the CPU candidates that qualification must reject, one flaw each (one file
// each, listed in common/flaws.def). Every arm computes relu(x + residual) (or leaky_relu, for the
// layout flaws) correctly apart from its flaw, and names the check that must catch it in
// expected_rejection.
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {

#define KQ_BROKEN_FAMILY_FLAWS "common/flaws.def"
#include "common/make_arms.inc"

}  // namespace kq::broken::cpu

KQ_EXPORT_ARMS(kq::broken::cpu::make_arms)
