// kq_broken_cuda: the CUDA candidates that qualification must reject, one flaw each (one file
// each, listed in common/flaws.def, and those that exist on the GPU alone in
// common/flaws_cuda.def). Every arm computes relu(x + residual) (or leaky_relu, for the layout
// flaws) correctly apart from its flaw, and names the check that must catch it in
// expected_rejection.
#include <memory>

#include "kq/plugin_api.hpp"

namespace kq::broken::cuda {

#define KQ_BROKEN_FAMILY_FLAWS "cuda/all_flaws.def"
#include "common/make_arms.inc"

}  // namespace kq::broken::cuda

KQ_EXPORT_ARMS(kq::broken::cuda::make_arms)
