// kq_broken_cuda: the CUDA candidates that qualification must reject, one flaw each (one file
// each). Every arm computes relu(x + residual) (or leaky_relu, for the layout flaws) correctly
// apart from its flaw, and names the check that must catch it in expected_rejection.
#include <memory>

#include "kq/plugin_api.hpp"

namespace kq::broken::cuda {

std::unique_ptr<IKernelArm> make_tail_skipped();
std::unique_ptr<IKernelArm> make_no_relu();
std::unique_ptr<IKernelArm> make_relu_one_input();
std::unique_ptr<IKernelArm> make_nan_swallowed();
std::unique_ptr<IKernelArm> make_signed_zero();
std::unique_ptr<IKernelArm> make_flush_to_zero();
std::unique_ptr<IKernelArm> make_low_precision();
std::unique_ptr<IKernelArm> make_writes_past_end();
std::unique_ptr<IKernelArm> make_reads_past_end();
std::unique_ptr<IKernelArm> make_mutates_input();
std::unique_ptr<IKernelArm> make_assumes_alignment();
std::unique_ptr<IKernelArm> make_ignores_strides();
std::unique_ptr<IKernelArm> make_pointer_cache();
std::unique_ptr<IKernelArm> make_race();
std::unique_ptr<IKernelArm> make_partial_writes();
std::unique_ptr<IKernelArm> make_crashes();
std::unique_ptr<IKernelArm> make_hangs();
std::unique_ptr<IKernelArm> make_late_work();
std::unique_ptr<IKernelArm> make_claims_layout();
std::unique_ptr<IKernelArm> make_refuses_unaligned();
std::unique_ptr<IKernelArm> make_fills_gaps();
std::unique_ptr<IKernelArm> make_errors_on_large();

namespace {

void make_arms(ArmList& out) {
  for (auto make :
       {make_tail_skipped,   make_no_relu,        make_relu_one_input,    make_nan_swallowed,
        make_signed_zero,    make_flush_to_zero,  make_low_precision,     make_writes_past_end,
        make_reads_past_end, make_mutates_input,  make_assumes_alignment, make_ignores_strides,
        make_pointer_cache,  make_race,           make_partial_writes,    make_crashes,
        make_hangs,          make_late_work,      make_claims_layout,     make_refuses_unaligned,
        make_fills_gaps,     make_errors_on_large})
    out.push_back(make());
}

}  // namespace
}  // namespace kq::broken::cuda

KQ_EXPORT_ARMS(kq::broken::cuda::make_arms)
