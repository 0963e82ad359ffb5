// kq_broken_cuda: the CUDA candidates that qualification must reject, one flaw each (one file
// each, listed in common/flaws.def, and those that exist on the GPU alone in
// common/flaws_cuda.def). Every arm computes relu(x + residual) (or leaky_relu, for the layout
// flaws) correctly apart from its flaw, and names the check that must catch it in
// expected_rejection.
#include <memory>

#include "kq/plugin_api.hpp"

namespace kq::broken::cuda {

#define KQ_BROKEN_FLAW(flaw) std::unique_ptr<IKernelArm> make_##flaw();
#include "../common/flaws.def"
#include "../common/flaws_cuda.def"
#undef KQ_BROKEN_FLAW

namespace {

void make_arms(ArmList& out) {
#define KQ_BROKEN_FLAW(flaw) out.push_back(make_##flaw());
#include "../common/flaws.def"
#include "../common/flaws_cuda.def"
#undef KQ_BROKEN_FLAW
}

}  // namespace
}  // namespace kq::broken::cuda

KQ_EXPORT_ARMS(kq::broken::cuda::make_arms)
