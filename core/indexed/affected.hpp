// Which elements of a program's tensors can change when a few input elements change: what the
// timing loop re-evaluates after it changes inputs under a timed call (timing/fresh_inputs.hpp).
//
// A region is a list of boxes; a box pins some of a tensor's dims to one index and leaves the
// others whole. A changed input element is a box pinning every dim. Each statement reads a
// changed box through an access whose subscripts are plain index variables (x[m, n]) as "those
// variables equal the pinned indices"; a subscript that is anything else (m + 1, t[m], g * CG + j)
// pins nothing, so the box only grows. The left-hand side then pins the variables it binds and
// that were pinned, except the one its scans run along (an element of a cumsum reads the run
// before it). The result holds every element that can change, and may hold more.
#pragma once
#include <cstdint>
#include <vector>

#include "kq/indexed.hpp"

namespace kq::ix {

inline constexpr std::int64_t kWhole = -1;  // a box's dim that is not pinned

// One box per entry: per dim of its tensor, the pinned index or kWhole.
using Box = std::vector<std::int64_t>;

struct ChangedElement {
  int tensor = -1;  // position in p.decls.tensors: an input
  Box coordinate;   // every dim pinned
};

// By tensor position in p.decls.tensors: the boxes that may change (none for a tensor that
// cannot). Boxes are kept distinct; one that another holds is dropped.
std::vector<std::vector<Box>> affected_regions(const Program& p,
                                               const std::vector<ChangedElement>& changed);

// How many elements a region holds at most (boxes may overlap: their sum), for a tensor of
// `shape`.
std::int64_t region_elements(const std::vector<Box>& region,
                             const std::vector<std::int64_t>& shape);

// The logical (row-major) indices of a region's elements, ascending and distinct.
std::vector<std::int64_t> region_indices(const std::vector<Box>& region,
                                         const std::vector<std::int64_t>& shape);

}  // namespace kq::ix
