// Planning: the qualification cases and the timing sizes of a spec.
#pragma once
#include <cstdint>
#include <vector>

#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

struct PlanOptions {
  bool include_huge = true;  // the case above 2^31 elements (skipped later if memory is short)
  bool quick = false;        // the smaller sizes only (for tests and CPU smoke runs)
};

std::vector<Case> plan_cases(const Spec& spec, const PlanOptions& options = {});

}  // namespace kq
