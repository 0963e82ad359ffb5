// One timed size's output checks: the reference of its inputs (every set of every arm holds the
// same values), the fresh inputs that change them before each sample (timing/fresh_inputs.hpp)
// and the comparison of a checked sample's output with the reference of what it was given: on
// the device where the output lies there and the reference can be made comparable there
// (device/reference_copy.hpp), else downloaded and compared on the host
// (timing/output_checks.hpp). Counts what the rounds' checks took, for size_end.
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "device/reference_copy.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "record/records.hpp"
#include "spec/spec.hpp"
#include "timing/fresh_inputs.hpp"
#include "timing/output_checks.hpp"
#include "util/copy_blocks.hpp"

namespace kq {

class SizeChecks {
 public:
  // For the timed point `c` of `spec`; `fresh_seed` draws the fresh inputs' positions.
  SizeChecks(const Spec& spec, const Case& c, std::uint64_t fresh_seed);
  SizeChecks(const SizeChecks&) = delete;
  SizeChecks& operator=(const SizeChecks&) = delete;

  // The reference of t's inputs (t: any set of the size; its pristine inputs are read). With
  // `cuda_stream` (a CUDA arm is timed), made comparable on the device where it can be.
  void reference(const CaseTensors& t, void* cuda_stream);

  // Before a sample: t's last change put back and a new one made (on `stream` for a CUDA set).
  void change(CaseTensors& t, void* stream) { fresh_.change(t, stream); }

  // t's output against the reference of what it was given (the size's, with the changed
  // inputs' region evaluated again); `cuda_arm`: a CUDA arm's output, counted among the host
  // checks where it cannot be compared on the device.
  OutputFinding check(const CaseTensors& t, bool cuda_arm);

  // The counts start again (the rounds' checks apart from the set-up's), and go into `end`.
  void restart_counts();
  void count_into(rec::SizeEnd& end) const;

 private:
  std::string device_reference(const CaseTensors& t);
  std::vector<CopyBlock> device_blocks(const FreshInputs::Patch& p, const CaseTensors& t) const;
  void swap_patch(std::vector<FreshInputs::Patch>& patch, const CaseTensors& t,
                  const std::vector<CopyBlock>& blocks);
  void accept_unknown(FreshInputs::Patch& p, const CaseTensors& t);

  const Spec& spec_;
  const Case case_;
  const std::vector<OutputRule> rules_;  // by output
  FreshInputs fresh_;                    // holds the three above by reference
  void* cuda_stream_ = nullptr;
  std::vector<HostBytes> want_;              // by output
  std::vector<std::vector<double>> bounds_;  // by output: E where compared by the bound
  HostBytes scratch_;
  ReferenceCopy on_device_;  // want_[0] comparable on the CUDA device, or empty (after want_:
                             // it is released first, its pinning with it)
  std::string no_device_reference_;  // why on_device_ is empty, or ""
  double check_s_ = 0;               // the checks: their time, count, and those on the host, why
  double patch_s_ = 0;               // of check_s_: the changed inputs' reference evaluated again
  int checks_ = 0, host_checks_ = 0;
  std::set<std::string> host_checks_why_;
};

}  // namespace kq
