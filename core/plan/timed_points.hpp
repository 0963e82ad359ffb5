// What the timing stage times: one entry per timed size (format 1) or timing point (format 2),
// each with the case its tensors are made from, the bytes one call moves and its FLOPs. Records
// key everything timed by `size`: for format 1 the element count, for format 2 the point's
// number in the spec's order (1, 2, ...; then the points kq run --points added), the point itself
// named beside it: runs are compared by that name (report/compare.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

struct TimedPoint {
  std::int64_t size = 0;  // the records' key
  std::string point;      // format 2: "M=32768,N=4096"; empty for format 1
  Case c;
  double bytes = 0;  // moved by one call: every input read once, every output written once
  double flops = 0;  // format 2: counted from the statements (or the spec's cost); 0 for format 1

  // "4096 elements" or "M=32768,N=4096", for messages.
  std::string where() const;
};

// Format 1: `sizes` (the spec's timing sizes when empty). Format 2: the spec's timing points
// whose numbers `sizes` lists (all when empty); throws std::invalid_argument for a number that
// names no point.
std::vector<TimedPoint> timed_points(const Spec& spec, const std::vector<std::int64_t>& sizes = {});

// Format 2: the number of the timing point whose largest tensor is smallest (the selftest's).
std::int64_t smallest_timing_point(const Spec& spec);

}  // namespace kq
