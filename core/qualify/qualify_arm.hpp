// Qualification of one arm, in the process that calls it (the worker): every case in order,
// each reported as it finishes, then the verdict.
//
// Records emitted (record/records.hpp): waiting (every few seconds while a case above 2^28
// elements waits its turn, big_case_lock), case_start (before each case: a crash or hang is
// pinned on the last one), case, then the verdict.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "kq/arm.hpp"
#include "plan/case.hpp"
#include "record/records.hpp"
#include "spec/spec.hpp"

namespace kq {

class SharedCases;

using Emit = std::function<void(const nlohmann::json&)>;

// The position in the plan's cases of the next case this worker runs, none when it is done:
// a worker sharing the arm's cases with others takes them as it goes (qualify/case_claims.hpp).
using TakeCase = std::function<std::optional<std::size_t>()>;

// Returns the verdict record (also emitted). A sticky CUDA error ends qualification at once
// (the process can run no more CUDA work): the verdict is "crashed". A rejection names the
// failing case that comes first in `cases`.
// `shared` (when set) holds cases' data computed once for every worker of the stage; a case
// it is still receiving (qualify/shared_cases.hpp) is waited for before the case starts.
// `take` (when set) picks the cases run, and the counts' total is theirs; else every case runs
// in order.
rec::VerdictRecord qualify_arm(IKernelArm& arm, const ArmIdentity& id, const Spec& spec,
                               const std::vector<Case>& cases, const Emit& emit,
                               SharedCases* shared = nullptr, const TakeCase& take = {});

// Seconds a case may run silently before the worker of an arm on `device` is declared hung (a
// CPU arm's share grows with a format-2 case's work).
double case_budget_seconds(const Spec& spec, const Case& c, Device device);
// The same until the arm's prepare() has returned: prepare() may compile.
double prepare_budget_seconds(const Spec& spec, const Case& c, Device device);

}  // namespace kq
