// Where the checks of a case's runs look at the output: on the host (the reference
// implementation, for every arm), or on the device where a CUDA arm wrote it, by kq's own
// kernels (device/check_kernels.hpp), for large outputs: then only verdicts, counts and the
// first mismatch cross the bus, and the inputs are compared with pristine copies kept on the
// device instead of being downloaded after every run. Both give the same findings, word for
// word (tests/gpu/test_device_checks.cpp).
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "device/check_kernels.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "spec/spec.hpp"

namespace kq {

class CaseChecks {
 public:
  virtual ~CaseChecks() = default;
  // After every upload of the inputs (their pristine state).
  virtual void inputs_loaded() {}
  // Takes the output as the last run left it; `first` also keeps it as the first run's, which
  // later runs are compared with.
  virtual void take(bool first) = 0;
  // CaseTensors::check_inputs_unchanged.
  virtual std::string inputs_unchanged() = 0;
  // CaseTensors::check_output_surroundings of the outputs taken last: the first finding.
  virtual CaseTensors::Finding surroundings(int poison) = 0;
  // The outputs taken last against want[o] (output o's host reference of the inputs of
  // `generation`) and, for an output compared by the accumulation bound, bounds[o] (its
  // reference's bounds, qualify/case_data.hpp): the first output that has a mismatch, or none.
  virtual CaseTensors::Mismatch values(std::span<const unsigned char* const> want,
                                       std::span<const double* const> bounds, int generation) = 0;
  // values() where no output is compared by the bound.
  CaseTensors::Mismatch values(std::span<const unsigned char* const> want, int generation) {
    return values(want, {}, generation);
  }
  // The first element at which an output taken last differs from the first run's (index -1:
  // none).
  virtual CaseTensors::Difference differs_from_first() = 0;
  virtual const char* where() const = 0;  // "host" or "device"
};

// The host's checks: every output downloaded whole, output o compared by rules[o].
std::unique_ptr<CaseChecks> host_case_checks(const CaseTensors& t,
                                             const std::vector<OutputRule>& rules);

// The device's checks where checked_on_device(spec, c, device, min_elements) says they apply
// and there is device memory for the copies, else the host's. `t` holds case c's tensors. One
// predicate decides, so that the host memory planned for a case (case_host_bytes) is the
// memory its checks take.
std::unique_ptr<CaseChecks> case_checks(const Spec& spec, const Case& c, const CaseTensors& t,
                                        Device device, const std::vector<OutputRule>& rules,
                                        void* stream, std::int64_t min_elements);

// The smallest output checked on the device: KQ_DEVICE_CHECK_MIN_ELEMENTS, else 2^20.
std::int64_t device_check_min_elements();

// Whether t's output can be checked on the device: a CUDA allocation of its own, dense.
bool device_checkable(const CaseTensors& t);
// Whether case_checks checks case c's output on the device for an arm on `device` (a CUDA arm,
// one output of its own, dense, of at least `min_elements` elements; of a format-2 spec, a float
// output compared element by element, in full), told from the plan before any tensor exists
// (device memory for the copies aside).
bool checked_on_device(const Spec& spec, const Case& c, Device device, std::int64_t min_elements);
// The host's comparison of an output, for the timing loop too: the elements of `got` (t's
// output allocation, as downloaded) against `want` (the reference, dense) under `rule`.
CaseTensors::Mismatch host_mismatch(const CaseTensors& t, const unsigned char* got,
                                    const unsigned char* want, const CompareRule& rule,
                                    std::size_t o = 0);
// The same under an output's rule: `bound` (the reference's bounds, dense) where it is compared
// by the accumulation bound (std::logic_error without them), else unread. Where the rule has
// samples, `want` and `bound` hold one element per sample and only those elements are compared.
CaseTensors::Mismatch host_mismatch(const CaseTensors& t, const unsigned char* got,
                                    const unsigned char* want, const OutputRule& rule,
                                    const double* bound, std::size_t o = 0);
// "output y: 3 of 8194 elements wrong; first at index 17" (sampled: "3 of 4096 sampled
// elements (of 2147487744) wrong; ..."), the output named where the case has several.
std::string mismatch_text(const CaseTensors& t, const CaseTensors::Mismatch& m);
// The device's checks of a dense output, for the timing loop too (device_checkable outputs
// only): the guard zones, downloaded alone; the elements of `got` (t's output or a copy of it,
// dense, on its device) against `want_on_device` (the reference, dense, on the same device;
// `want` is its host copy, for the mismatch's bits).
CaseTensors::Finding device_guard_finding(const CaseTensors& t);
CaseTensors::Mismatch device_mismatch(const CaseTensors& t, const void* got,
                                      const void* want_on_device, const unsigned char* want,
                                      const CompareRule& rule, void* stream);
// The mismatch a device scan of `got` found (none where its count is 0): the reference's bits
// from `want` (host), the output's from `got` (device), on `stream`.
CaseTensors::Mismatch scan_mismatch(const CaseTensors& t, const devcheck::Scan& s, const void* got,
                                    const unsigned char* want, void* stream);

}  // namespace kq
