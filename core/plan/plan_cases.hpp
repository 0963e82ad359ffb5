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
  // The sizes that will be timed (kq run --sizes); empty: the spec's timing.sizes. Each is a
  // case too (up to 2^20 + 3 elements when quick), so an arm is qualified at exactly the sizes
  // it is timed at. Format 2: the numbers of the timing points that will be timed (each is a
  // case, quick or not); empty: every timing point.
  std::vector<std::int64_t> timing_sizes;
};

std::vector<Case> plan_cases(const Spec& spec, const PlanOptions& options = {});

}  // namespace kq
