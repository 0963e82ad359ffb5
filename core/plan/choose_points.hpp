// kq run --points: which points are timed (and so qualified), resolved against the spec. A
// format-2 spec's timing points are named by their numbers or by their dim values, and a point
// the spec does not list is added after its own; format 1 has one implicit dim, n (the element
// count), so its points are sizes. Pure: no I/O.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace kq {

// Format 1's one dim, as --points names it ({n: 1048576}).
inline constexpr const char* kFormat1Dim = "n";

// A --points value that does not fit the spec: the message names the option, the value as
// written and what is wrong with it.
struct PointsError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// What is timed instead of the spec's own timing sizes or points.
struct TimingChoice {
  // Format 1: element counts. Format 2: timing-point numbers, 1-based, over the spec's timing
  // points followed by `added`. Each once, in the order given. Empty: the spec's own.
  std::vector<std::int64_t> keys;
  // Format 2: the points the spec does not list, in the order given.
  std::vector<Point> added;
};

// Each text is one of:
// - a comma list of numbers ("1,3", "4096,2^20"): format 2's timing-point numbers, format 1's
//   sizes;
// - a flow map of dim values, "{M: 32768, N: 4096}" (format 1: "{n: 4096}"): every dim given
//   once, each a positive integer (2^k allowed), no tensor above 2^40 elements;
// - a point's label as records print it, "M=32768,N=4096".
// Throws PointsError.
TimingChoice choose_points(const Spec& spec, const std::vector<std::string>& texts);

// "{M: 32768, N: 4096}" from the spec's first timing point ("{n: 4096}" for format 1): how a
// point is written, for messages.
std::string example_point(const Spec& spec);

// Appends `added` to the spec's timing points (format 2; nothing for format 1), so that a
// TimingChoice's numbers name them: every process that loads the spec applies the same points.
void add_timing_points(Spec& spec, const std::vector<Point>& added);

}  // namespace kq
