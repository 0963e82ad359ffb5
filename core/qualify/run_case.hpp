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
  // output_guard, output_gaps, input_modified, repeat_differs, new_values.
  std::string check;
  std::string message;      // one line; for refusals, the arm's reason
  std::int64_t index = -1;  // first bad element (logical index), for value checks
  std::int64_t bad_count = 0;
  std::string expected, got;  // "value (bits)"
  double seconds = 0.0;
  rec::CaseStages stages;  // where those seconds went
  std::string checked_on;  // "host" or "device" (qualify/case_checks.hpp); empty if not run
};

const char* to_string(CaseOutcome::Result r);

// Runs `c` on `arm`; `prepared` (when set) is told the seconds prepare() took as soon as it
// returns. `shared` (when set) holds the case's inputs and references computed already
// (qualify/case_data.hpp, its CaseDataLayout); otherwise they are computed here. Throws
// CudaError for a CUDA failure (the caller decides whether the process can go on),
// std::exception for host-side trouble.
CaseOutcome run_case(IKernelArm& arm, Device device, const Spec& spec, const Case& c,
                     const std::function<void(double)>& prepared = {},
                     const unsigned char* shared = nullptr);

}  // namespace kq
