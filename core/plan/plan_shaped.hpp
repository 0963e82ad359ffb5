// The qualification cases of a format-2 (shaped) spec: every shape point (plan/shape_points.hpp)
// with mixed values; the value classes that break shaped kernels at points with long and short
// rows; the conduct case; views offset, strided and fenced one tensor at a time; outputs on an
// input's storage (never admitted). plan_cases() calls it for format-2 specs.
#pragma once
#include <vector>

#include "plan/case.hpp"
#include "plan/plan_cases.hpp"
#include "spec/spec.hpp"

namespace kq {

// Pairwise points keep every tensor within this many elements: 2^24 (2^16 when quick).
inline constexpr std::int64_t kShapedPointElements = std::int64_t{1} << 24;
inline constexpr std::int64_t kShapedQuickPointElements = std::int64_t{1} << 16;
// The fixed points of the conduct, value-class and layout cases (rows of 1025 or 4097 along the
// last reduced dim): the other reduced dims join in only up to this many elements.
inline constexpr std::int64_t kFixedPointElements = std::int64_t{1} << 22;

std::vector<Case> plan_shaped_cases(const Spec& spec, const PlanOptions& options);

}  // namespace kq
