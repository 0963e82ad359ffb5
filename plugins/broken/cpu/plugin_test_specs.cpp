// kq_broken_cpu_test_specs: the shaped CPU candidates whose flaws show only on the test specs of
// tests/data/specs_v2 (common/flaws_cpu_test_specs.def says why they are a plugin of their own).
#include <memory>

#include "cpu_common.hpp"

namespace kq::broken::cpu {

#define KQ_BROKEN_FAMILY_FLAWS "common/flaws_cpu_test_specs.def"
#include "common/make_arms.inc"

}  // namespace kq::broken::cpu

KQ_EXPORT_ARMS(kq::broken::cpu::make_arms)
