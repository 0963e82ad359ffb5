// One qualification case on one arm: allocate, poison, prepare, run, check everything.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "kq/arm.hpp"
#include "plan/case.hpp"
#include "record/records.hpp"
#include "spec/spec.hpp"

namespace kq {

struct CaseOutcome {
  enum class Result { passed, refused, failed, skipped };
  Result result = Result::passed;
  // For failures, the check that caught it (stable names, used by broken candidates'
  // expected_rejection): refused_in_contract, arm_error, accepted_out_of_contract, values,
  // output_guard, output_gaps, input_modified, repeat_differs, new_values, wrong_stream,
  // graph_output, device_state.
  std::string check;
  std::string message;      // one line; for refusals, the arm's reason
  std::int64_t index = -1;  // first bad element (logical index), for value checks
  std::int64_t bad_count = 0;
  std::string expected, got;  // "value (bits)"
  double seconds = 0.0;
  rec::CaseStages stages;  // where those seconds went
  std::string checked_on;  // "host" or "device" (qualify/case_checks.hpp); empty if not run
  // Elements compared with the reference where the case was checked at samples (all outputs
  // together; qualify/reference_samples.hpp), else 0.
  std::int64_t sampled_elements = 0;
};

const char* to_string(CaseOutcome::Result r);

// Runs `c` on `arm`; `prepared` (when set) is told the seconds prepare() took as soon as it
// returns. `shared` (when set) holds the case's inputs and references computed already
// (qualify/case_data.hpp, its CaseDataLayout); otherwise they are computed here. Throws
// CudaError for a CUDA failure (the caller decides whether the process can go on),
// std::exception for host-side trouble.
// The host memory run_case takes for case c on an arm on `device`, in multiples of the output's
// bytes: the inputs generated here and the reference (unless the stage shares them:
// `shared_data`), the arm's tensors where they are host memory, and for checks on the host the
// output's copies (the first run's, the later runs') and, for a CUDA arm, one input downloaded
// at a time. A CUDA arm's case checked on the device takes none beyond the staging ring. A case
// that needs more than the host has available is skipped, with both figures.
std::uint64_t case_host_bytes(const Spec& spec, const Case& c, std::size_t elem_size, Device device,
                              bool shared_data);

CaseOutcome run_case(IKernelArm& arm, Device device, const Spec& spec, const Case& c,
                     const std::function<void(double)>& prepared = {},
                     const unsigned char* shared = nullptr);

}  // namespace kq
