// Input values for any spec's case: format 1 through fill_input_values (qualify/values.hpp);
// format 2 (shaped) by tensor: value types along each tensor's rows (its last dim) for the
// shaped classes (plan/case.hpp), the others as format 1 draws them; integer tensors that a
// gather reads through within the extent they index, other integer and bool tensors small.
#pragma once
#include <cstdint>
#include <optional>

#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

// The integers class draws value inputs in [-kIntegerClassMax, kIntegerClassMax]; integer inputs
// not read as a gather's subscript are drawn in [-kSmallIntegerMax, kSmallIntegerMax]
// (qualify/exact_integers.hpp reads both).
inline constexpr std::int64_t kIntegerClassMax = 3;
inline constexpr std::int64_t kSmallIntegerMax = 8;

// Fills `count` storage positions at `dst` with input `input` of case `c`, in the input's dtype.
void fill_case_input(const Spec& spec, const Case& c, int input, void* dst, std::int64_t count,
                     std::uint64_t generation);

// Format 2: the extent an integer input `tensor` (in program->decls.tensors) indexes when a
// gather reads through it (x[m, t[m]]: N), at dim values `dims`; nothing when it is not a
// gather's subscript.
std::optional<std::int64_t> gather_extent(const ix::Program& p, int tensor,
                                          const std::vector<std::int64_t>& dims);

}  // namespace kq
