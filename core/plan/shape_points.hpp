// The qualification points of a format-2 (shaped) spec: dim values chosen from each dim's kind,
// every pair of two dims' values covered (not their full product), a huge set, and the spec's
// own qualification and timing points. Pure: no device, no I/O. Not wired into qualify yet.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/shaped.hpp"

namespace kq {

// A point's tensors above this many elements are huge: 32-bit element offsets wrap there.
inline constexpr std::int64_t kHugePointElements = std::int64_t{1} << 31;
// No tensor of a point holds more: the spec's own bound (spec_detail::kMaxElements, 2^40).
inline constexpr std::int64_t kMaxPointElements = std::int64_t{1} << 40;

struct ShapePlanOptions {
  // Values up to kQuickMaxDim only (the spec's timing points aside: what is timed is
  // qualified), no huge point and no tensor above kHugePointElements (the spec's own points
  // beyond that are left out too).
  bool quick = false;
  bool include_huge = true;  // the huge set (full mode only)
  // The pairwise covering's points keep every tensor within this many elements (the pairs
  // beyond it are left out): the float64 reference and the slowest arms pay for every point.
  std::int64_t max_elements = kHugePointElements;
  // The numbers (1, 2, ... in the spec's order) of the timing points that will be timed: only
  // those are planned among the spec's timing points. Empty: all of them.
  std::vector<std::int64_t> timed;
};

inline constexpr std::int64_t kQuickMaxDim = 4097;

// The spec's own qualification points the quick plan leaves out (a dim above kQuickMaxDim, or a
// tensor above kHugePointElements; one that is also a timing point is kept), by name
// ("M=3,K=65537"): what `kq run --quick` says it skips, so that none goes unsaid.
std::vector<std::string> quick_left_out(const ShapedContract& c);

struct ShapePoint {
  std::vector<std::pair<std::string, std::int64_t>> dims;  // in the spec's dim order
  std::string name;                                        // "M=7,N=4097"
  bool huge = false;       // some tensor above kHugePointElements, or the huge set's long row
  bool from_spec = false;  // among the spec's qualification points
  bool timed = false;      // among the spec's timing points
  friend bool operator==(const ShapePoint&, const ShapePoint&) = default;
};

// The candidate values of one dim of `kind`, ascending: 1, 2, 3, 5, 7, each of 32, 128, 1024,
// 4096, 8192 minus one, exact and plus one, 65521 (a large prime), and for a reduced dim
// 2^20 + 3 (a row longer than any block). Quick: those up to kQuickMaxDim.
std::vector<std::int64_t> shape_candidates(ix::DimKind kind, bool quick);

// The largest element count of the contract's tensors (inputs, outputs, temporaries) at the
// given dim values (in dim order), saturated just above kMaxPointElements.
std::int64_t largest_tensor_elements(const ShapedContract& c,
                                     const std::vector<std::int64_t>& dims);

// The points, ordered by their largest tensor (largest last), no point twice:
// - a greedy all-pairs covering of the dims' candidates (each value once for a single dim),
//   every tensor at most kHugePointElements: the pairs beyond that are the huge set's regime;
// - full mode: the huge set, flagged huge: one point with a tensor above 2^31 elements (its
//   last dim 4097, its first dim as many as needed, every other dim 1) and, when a dim is
//   reduced, one single row of 2^24 + 1 (beyond 2^20, and not exact in f32) with every other
//   dim 1;
// - the spec's qualification points (from_spec) and timing points (timed), merged with equal
//   points. Every point's largest tensor is at most kMaxPointElements.
std::vector<ShapePoint> plan_shape_points(const ShapedContract& c, const ShapePlanOptions& o);

}  // namespace kq
