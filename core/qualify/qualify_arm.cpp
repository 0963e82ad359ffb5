#include "qualify/qualify_arm.hpp"

#include <memory>

#include "device/cuda_check.hpp"
#include "qualify/big_case_lock.hpp"
#include "qualify/run_case.hpp"

namespace kq {

double case_budget_seconds(const Spec& spec, const Case& c) {
  // Filling, the reference, the copies, two poisoned runs, the repeat and the new-values run
  // took 80 ns an element at 2^24 + 1 on the H200's host (16 cores); allow three times that.
  // A case that does not take turns may share the host with as many workers as --jobs runs
  // (8 by default at most): 2^28 elements (a timed size) may take 8 times as long.
  const double per_element = c.numel() > kBigCaseElements ? 250e-9 : 8 * 250e-9;
  return spec.qualification.hang_timeout_s + per_element * static_cast<double>(c.numel());
}

nlohmann::json qualify_arm(IKernelArm& arm, const ArmIdentity& id, const Spec& spec,
                           const std::vector<Case>& cases, const Emit& emit) {
  using nlohmann::json;
  json verdict = {{"type", "verdict"}, {"arm", id.name}};
  Status sup = arm.supports(spec.op);
  if (!sup.is_ok()) {
    verdict["verdict"] = sup.is_unsupported() ? "unsupported" : "rejected";
    verdict["check"] = sup.is_unsupported() ? "" : "arm_error";
    verdict["detail"] = sup.message();
    emit(verdict);
    return verdict;
  }

  int passed = 0, refused = 0, failed = 0, skipped = 0;
  json first_failure;
  std::string crash;
  for (const Case& c : cases) {
    std::unique_ptr<BigCaseLock> turn;
    if (c.numel() > kBigCaseElements)
      turn = std::make_unique<BigCaseLock>([&] {
        emit({{"type", "waiting"}, {"arm", id.name}, {"case", c.name}});
      });
    emit({{"type", "case_start"},
          {"arm", id.name},
          {"case", c.name},
          {"budget_s", case_budget_seconds(spec, c)}});
    CaseOutcome o;
    try {
      o = run_case(arm, id.device, spec, c);
    } catch (const CudaError& e) {
      o.result = CaseOutcome::Result::failed;
      o.check = "cuda_error";
      o.message = e.what();
      if (e.sticky()) crash = std::string("sticky CUDA error in ") + c.name + ": " + e.what();
    } catch (const std::exception& e) {
      o.result = CaseOutcome::Result::failed;
      o.check = "arm_error";
      o.message = std::string("exception: ") + e.what();
    }
    json r = {{"type", "case"},
              {"arm", id.name},
              {"case", c.name},
              {"group", c.group},
              {"in_contract", c.in_contract},
              {"result", to_string(o.result)},
              {"seconds", o.seconds}};
    if (!c.in_contract) r["outside_because"] = c.outside_because;
    if (!o.check.empty()) r["check"] = o.check;
    if (!o.message.empty()) r["message"] = o.message;
    if (o.index >= 0) {
      r["index"] = o.index;
      r["bad_count"] = o.bad_count;
      r["expected"] = o.expected;
      r["got"] = o.got;
    }
    emit(r);
    switch (o.result) {
      case CaseOutcome::Result::passed:
        ++passed;
        break;
      case CaseOutcome::Result::refused:
        ++refused;
        break;
      case CaseOutcome::Result::skipped:
        ++skipped;
        break;
      case CaseOutcome::Result::failed:
        ++failed;
        if (first_failure.is_null()) first_failure = r;
        break;
    }
    if (!crash.empty()) break;
  }

  verdict["counts"] = {{"passed", passed},
                       {"refused", refused},
                       {"failed", failed},
                       {"skipped", skipped},
                       {"total", cases.size()}};
  if (!crash.empty()) {
    verdict["verdict"] = "crashed";
    verdict["check"] = "cuda_error";
    verdict["case"] = first_failure.value("case", "");
    verdict["detail"] = crash;
  } else if (failed > 0) {
    verdict["verdict"] = "rejected";
    verdict["check"] = first_failure["check"];
    verdict["case"] = first_failure["case"];
    verdict["detail"] = first_failure.value("message", "");
  } else {
    verdict["verdict"] = "qualified";
  }
  emit(verdict);
  return verdict;
}

}  // namespace kq
