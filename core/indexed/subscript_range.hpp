// Whether every subscript stays inside its tensor at given dim values, decided before anything is
// evaluated: interval arithmetic over each index variable's range. A spec whose dims are tied by
// index arithmetic (x[b, g * C + j] with x of [B, K] needs K >= G * C) has points where no input
// is valid; the spec's own points are refused there, the planner's are left out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kq/indexed.hpp"

namespace kq::ix {

// Where a subscript leaves its tensor: the tensor (by position in decls.tensors), the dimension
// of it, the values the subscript takes and the message below.
struct OutOfRange {
  int tensor = -1;
  std::size_t dim = 0;
  std::int64_t lo = 0, hi = 0;
  std::string message;
};
std::optional<OutOfRange> first_out_of_range(const Program& p,
                                             const std::vector<std::int64_t>& dims);

// The first subscript that leaves its tensor at `dims` (values by dim, in declaration order):
// "line 2 `y[b, g] = ...`: subscript 2 of 'x' reaches 7, outside [0, 7)"; nullopt if none does.
// Gathers (a subscript that reads a tensor) are not bounded here: the reference checks each one.
// A padded input's subscripts are not checked: outside its extent it reads its pad.
// Accesses inside a statement or reduction over an empty range are never made, so not checked.
std::optional<std::string> subscript_out_of_range(const Program& p,
                                                  const std::vector<std::int64_t>& dims);

// The values a subscript expression (node `node`: index arithmetic over indices, dims and
// integers) takes at `dims`, lowest and highest; nullopt where it reads a tensor.
struct IndexRange {
  std::int64_t lo = 0, hi = 0;
};
std::optional<IndexRange> subscript_values(const Program& p, int node,
                                           const std::vector<std::int64_t>& dims);

}  // namespace kq::ix
