// A qualification case: one named, seeded, reproducible input configuration, classified by the
// spec's contract. Produced by plan_cases(); consumed by the qualification stage.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "device/fenced.hpp"

namespace kq {

// Cases above this many elements (the 2^28 timed size is the largest below it) take tens of GiB:
// the planner puts them last, and qualification runs them one at a time per kind of memory
// (qualify/big_case_lock.hpp).
inline constexpr std::int64_t kBigCaseElements = std::int64_t{1} << 28;

// How input values are drawn. Every class mixes signs; none is all zeros.
enum class ValueClass {
  mixed,          // uniform in [-scale, scale]
  all_negative,   // every input negative: relu-like ops see only negative arguments
  cancel,         // input 1 = -input 0 exactly (sums are exactly zero, signed +0)
  negative_zero,  // every other element -0.0 in every input, the rest mixed
  denormal,       // subnormals (1e-40, smallest subnormal) and the smallest normal, mixed in
  huge,           // magnitudes near 1e20
  overflow,       // magnitudes near the dtype's max, so sums overflow to inf
  nan,            // NaN in input `special_input` (ieee domain)
  inf,            // +inf and -inf in input `special_input` (ieee domain)
  // Mixed, with about 1 element in 8 replaced by a special of every class the case admits:
  // signed zeros, subnormals, the smallest normal, huge magnitudes and near-max values (unless
  // `max_abs_input` bounds them), NaN and infinities (when `ieee_specials`).
  sprinkled,
  // Input 0 + input k exactly halfway between two values of the dtype (k > 0 holds half or
  // three halves of input 0's ulp): round to nearest even against truncation. Half dtypes with
  // two inputs or more; input 0 lies in [1/8, 8), so not where max_abs_input is below 8.
  ties,
  // Format 2 (shaped), along each input's rows (its last dim):
  offset_rows,    // a large offset plus small noise: one-pass variance cancels
  constant_rows,  // every element of a row equal: variance 0, softmax uniform
  spikes,         // mixed, with large values at each row's start and end and block boundaries
  integers,       // small integers in [-3, 3]: sums exact, many ties (argmax)
  masked_rows,    // -inf at random positions and one row all -inf (ieee domain)
};

const char* to_string(ValueClass v);

// FNV-1a of `s` from `h`: a case's seed from its name, so that it is drawn alike in every plan.
std::uint64_t fnv1a(const std::string& s, std::uint64_t h);

// Row-major strides (in elements) of a dense tensor of `shape`.
std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape);

// Where a tensor lives inside its allocation and how it is laid out.
struct Placement {
  std::vector<std::int64_t> strides;  // elements; empty means row-major contiguous
  std::int64_t offset_bytes = 0;      // from a 256-byte aligned base
  // Unmapped memory right after the last element (after) or before the first (before), in
  // place of guard zones: reads out of bounds fault.
  Fence fence = Fence::none;
};

struct Case {
  std::string name;   // unique and stable, e.g. "size/1025", "offset/x+4", "values/nan_in_x"
  std::string group;  // size, timing, conduct, rank, offset, layout, alias, fence, values
  bool in_contract = true;
  std::string outside_because;  // why the contract does not admit it (when !in_contract)

  // Format 1: every tensor's shape. Format 2: the shape of the case's largest tensor, which sizes
  // its budgets; each tensor's own shape follows from `dims` (plan/case_shapes.hpp).
  std::vector<std::int64_t> shape;
  // Format 2: the value of each dim of the spec (in its order); empty for format 1.
  std::vector<std::int64_t> dims;
  std::vector<Placement> inputs;
  std::vector<Placement> outputs;  // one per output
  // Output 0 placed on input `alias_input`'s storage, shifted by `alias_shift` elements
  // (0 = an exact alias, in-place).
  int alias_input = -1;
  std::int64_t alias_shift = 0;

  ValueClass values = ValueClass::mixed;
  double scale = 1.0;
  int special_input = -1;  // for nan / inf
  std::uint64_t seed = 0;
  // What the spec admits, for `sprinkled`: NaN and infinities (the ieee domain), and the bound
  // on every input's magnitude (> 0: no huge or near-max values, nothing beyond it).
  bool ieee_specials = false;
  double max_abs_input = 0.0;

  // A conduct case: run_case also watches how the arm behaves (for CUDA arms, its stream
  // discipline); otherwise it runs as any other case.
  bool conduct = false;

  std::int64_t numel() const;
};

}  // namespace kq
