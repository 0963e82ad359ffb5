#include "qualify/qualify_arm.hpp"

#include <cstdio>

#include <algorithm>
#include <memory>
#include <optional>

#include "device/cuda_check.hpp"
#include "qualify/big_case_lock.hpp"
#include "qualify/reference_samples.hpp"
#include "qualify/run_case.hpp"
#include "qualify/shared_cases.hpp"

namespace kq {

double case_budget_seconds(const Spec& spec, const Case& c, Device device) {
  // Filling, the reference, the copies, two poisoned runs, the repeat and the new-values run
  // took 80 ns an element at 2^24 + 1 on the H200's host (16 cores); allow three times that.
  // A case that does not take turns may share the host with as many workers as --jobs runs
  // (8 by default at most): 2^28 elements (a timed size) may take 8 times as long.
  const double per_element = c.numel() > kBigCaseElements ? 250e-9 : 8 * 250e-9;
  // A format-2 reference costs by its work, not its elements (a matrix product's is 2 M N K):
  // the float64 evaluator ran at about 30 ns a FLOP on one core of the 2-core machine; allow
  // 50, up to the budget beyond which only samples are computed.
  const double full_work = spec.shaped ? reference_work(*spec.op.program, c.dims) : 0.0;
  const double work = std::min(full_work, reference_work_budget());
  // A CPU arm computes all of it, in each of a case's four runs: a product's timed point is a
  // case too, and 18_matmul_transposed_both's (2048 x 4096 x 8192, 137 GFLOP) took torch 1.13's
  // CPU mm 1483 s for the four on one core of the 2-core machine (0.37 GFLOP/s; 0.29 at
  // 1024 x 2048 x 4096 alone). Allow 0.1 GFLOP/s a run.
  const double arm_work = device == Device::cpu ? 4 * 10e-9 * full_work : 0.0;
  return spec.qualification.hang_timeout_s + per_element * static_cast<double>(c.numel()) +
         50e-9 * work + arm_work;
}

double prepare_budget_seconds(const Spec& spec, const Case& c, Device device) {
  // prepare() may compile, and a compiler may take minutes where a kernel takes microseconds:
  // torch.compile's CPU code (a C++ build) took over 20 s a shape on the H200's host with 8
  // workers at once. Until prepare() returns, the case may take 4 hang timeouts, 120 s at least.
  return case_budget_seconds(spec, c, device) +
         std::max(120.0, 4 * spec.qualification.hang_timeout_s);
}

namespace {

// One line per case in the worker's log (its stderr): the result and where the time went.
void log_case(const Case& c, const CaseOutcome& o) {
  const rec::CaseStages& s = o.stages;
  char line[320];
  std::snprintf(line, sizeof line,
                "case %s: %s in %.2f ms (generate %.2f, reference %.2f, upload %.2f, run %.2f, "
                "download %.2f, compare %.2f%s%s)\n",
                c.name.c_str(), to_string(o.result), 1e3 * o.seconds, 1e3 * s.generate,
                1e3 * s.reference, 1e3 * s.upload, 1e3 * s.run, 1e3 * s.download, 1e3 * s.compare,
                o.checked_on.empty() ? "" : "; checked on the ", o.checked_on.c_str());
  std::fputs(line, stderr);
}

rec::CaseResult case_record(const std::string& arm, const Case& c, const CaseOutcome& o) {
  rec::CaseResult r;
  r.arm = arm;
  r.case_name = c.name;
  r.group = c.group;
  r.in_contract = c.in_contract;
  r.result = to_string(o.result);
  r.seconds = o.seconds;
  r.stages = o.stages;
  if (!o.checked_on.empty()) r.checked_on = o.checked_on;
  if (o.sampled_elements > 0) r.sampled_elements = o.sampled_elements;
  if (!c.in_contract) r.outside_because = c.outside_because;
  if (!o.check.empty()) r.check = o.check;
  if (!o.message.empty()) r.message = o.message;
  if (o.index >= 0) {
    r.index = o.index;
    r.bad_count = o.bad_count;
    r.expected = o.expected;
    r.got = o.got;
  }
  return r;
}

// Runs one case; a CUDA error or an exception is the case's failure. `crash` is set when the
// CUDA error is sticky: the process can run no more CUDA work.
CaseOutcome checked_case(IKernelArm& arm, const ArmIdentity& id, const Spec& spec, const Case& c,
                         std::string& crash, const Emit& emit, const unsigned char* shared) {
  try {
    return run_case(
        arm, id.device, spec, c,
        [&](double s) {
          emit(rec::Prepared{id.name, c.name, s});
        },
        shared);
  } catch (const CudaError& e) {
    CaseOutcome o;
    o.result = CaseOutcome::Result::failed;
    o.check = "cuda_error";
    o.message = e.what();
    if (e.sticky()) crash = std::string("sticky CUDA error in ") + c.name + ": " + e.what();
    return o;
  } catch (const std::exception& e) {
    CaseOutcome o;
    o.result = CaseOutcome::Result::failed;
    o.check = "arm_error";
    o.message = std::string("exception: ") + e.what();
    return o;
  }
}

void count(rec::CaseCounts& n, CaseOutcome::Result r) {
  switch (r) {
    case CaseOutcome::Result::passed:
      ++n.passed;
      break;
    case CaseOutcome::Result::refused:
      ++n.refused;
      break;
    case CaseOutcome::Result::skipped:
      ++n.skipped;
      break;
    case CaseOutcome::Result::failed:
      ++n.failed;
      break;
  }
}

}  // namespace

rec::VerdictRecord qualify_arm(IKernelArm& arm, const ArmIdentity& id, const Spec& spec,
                               const std::vector<Case>& cases, const Emit& emit,
                               SharedCases* shared, const TakeCase& take) {
  rec::VerdictRecord verdict;
  verdict.arm = id.name;
  if (!id.tampering.empty()) {  // its plugin saw it change what every arm shares, at load
    verdict.verdict = rec::Verdict::rejected;
    verdict.check = "tampering";
    verdict.detail = id.tampering;
    emit(verdict);
    return verdict;
  }
  Status sup = arm.supports(spec.op);
  if (!sup.is_ok()) {
    verdict.verdict = sup.is_unsupported() ? rec::Verdict::unsupported : rec::Verdict::rejected;
    verdict.check = sup.is_unsupported() ? "" : "arm_error";
    verdict.detail = sup.message();
    emit(verdict);
    return verdict;
  }

  rec::CaseCounts counts;
  rec::CaseStages stages;
  std::optional<rec::CaseResult> first_failure;
  std::size_t first_failure_at = 0;
  std::string crash;
  std::size_t in_order = 0, run = 0;
  auto next = [&]() -> std::optional<std::size_t> {
    if (take) return take();
    if (in_order < cases.size()) return in_order++;
    return std::nullopt;
  };
  while (const std::optional<std::size_t> at = next()) {
    const Case& c = cases.at(*at);
    ++run;
    // A case the stage is still computing: waited for before taking a turn at the machine.
    if (shared) shared->await(c.name, [&] { emit(rec::Waiting{id.name, c.name, {}}); });
    std::unique_ptr<BigCaseLock> turn;
    if (c.numel() > kBigCaseElements)
      turn = std::make_unique<BigCaseLock>(id.device, [&] {
        emit(rec::Waiting{id.name, c.name, {}, /*turn=*/true});
      });
    emit(rec::CaseStart{id.name,
                        c.name,
                        case_budget_seconds(spec, c, id.device),
                        {},
                        prepare_budget_seconds(spec, c, id.device)});
    const CaseOutcome o =
        checked_case(arm, id, spec, c, crash, emit, shared ? shared->find(c.name) : nullptr);
    const rec::CaseResult r = case_record(id.name, c, o);
    emit(r);
    stages += o.stages;
    log_case(c, o);
    count(counts, o.result);
    if (o.result == CaseOutcome::Result::failed && (!first_failure || *at < first_failure_at)) {
      first_failure = r;
      first_failure_at = *at;
    }
    if (!crash.empty()) break;
  }

  counts.total = static_cast<int>(take ? run : cases.size());
  verdict.counts = counts;
  verdict.stages = stages;
  if (!crash.empty()) {
    verdict.verdict = rec::Verdict::crashed;
    verdict.check = "cuda_error";
    verdict.case_name = first_failure ? first_failure->case_name : "";
    verdict.detail = crash;
  } else if (first_failure) {
    verdict.verdict = rec::Verdict::rejected;
    verdict.check = first_failure->check;
    verdict.case_name = first_failure->case_name;
    verdict.detail = first_failure->message.value_or("");
  } else {
    verdict.verdict = rec::Verdict::qualified;
  }
  emit(verdict);
  return verdict;
}

}  // namespace kq
