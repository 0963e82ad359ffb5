// Input values for any spec's case: format 1 through fill_input_values (qualify/values.hpp);
// format 2 (shaped) by tensor: value types along each tensor's rows (its last dim) for the
// shaped classes (plan/case.hpp), the others as format 1 draws them; integer tensors that a
// gather reads through within the extent they index, other integer and bool tensors small.
#pragma once
#include <cstdint>
#include <optional>

#include "indexed/subscript_range.hpp"
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

// Format 2: the values an integer input `tensor` (in program->decls.tensors) may take when a
// gather reads through it, at dim values `dims`: x[m, t[m]] reads x's N columns, so [0, N - 1];
// x[b, g * C + t[g]] with x of [B, K] needs g * C + t in [0, K) for every g, so
// [0, K - 1 - (G - 1) * C]. Nothing when it is no gather's subscript (or one of another form).
std::optional<ix::IndexRange> gather_range(const ix::Program& p, int tensor,
                                           const std::vector<std::int64_t>& dims);

}  // namespace kq
