// What every arm's checks of one case compare against, the same for all of them: for each of
// the two generations of values (the first run's, and the new values under the same pointers),
// each input's data span as fill_input_values draws it, the float64 reference rounded to the
// dtype, and for an output compared by the accumulation bound (qualify/compare.hpp) each
// element's bound, in float64; for a case checked at samples, those of the sampled elements.
// Computed once (compute_case_data) and then only read: by the worker that computed it, or by every
// worker of a stage from one sealed shared copy (qualify/shared_cases.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

inline constexpr int kGenerations = 2;

// The elements an input's view reaches, from the lowest (min_elem <= 0, relative to the view's
// first element) over `elems` positions, gaps included.
struct Span {
  std::int64_t min_elem = 0;
  std::int64_t elems = 0;
};
Span span_of(const std::vector<std::int64_t>& shape, const Placement& place);

// A view of `data` over `shape` with `strides` (elements), on `device`.
TensorView view_of(void* data, DType dtype, Device device, const std::vector<std::int64_t>& shape,
                   const std::vector<std::int64_t>& strides);

// The float64 reference of case `c` on `inputs` (host views), each output rounded to its dtype,
// dense in logical order into dst[k] (output k's elements); and where bounds[k] is set (bounds
// may be empty), output k's accumulation bounds (doubles, dense in logical order): what an
// output compared by the bound (output_rules' by_bound) is checked with. A case above the
// reference's cost budget (qualify/reference_samples.hpp) gets its outputs at their samples
// only: dst[k] and bounds[k] then hold one element per sample of output k (output_rules'
// samples), in order.
void case_reference(const Spec& spec, const Case& c, std::span<const TensorView> inputs,
                    std::span<unsigned char* const> dst, std::span<double* const> bounds = {});

// Where each part lies in a case's data, in bytes: parts start on 64-byte boundaries.
class CaseDataLayout {
 public:
  CaseDataLayout(const Spec& spec, const Case& c);
  std::size_t input_offset(std::size_t input, int generation) const;
  std::size_t input_bytes(std::size_t input) const { return input_bytes_[input]; }
  std::size_t reference_offset(int generation, std::size_t output = 0) const;
  std::size_t reference_bytes(std::size_t output = 0) const { return reference_bytes_[output]; }
  // An output's bounds (8 bytes an element where it is compared by the bound, else 0 bytes).
  // A sampled case's reference and bounds hold its samples alone.
  std::size_t bound_offset(int generation, std::size_t output) const;
  std::size_t bound_bytes(std::size_t output) const { return bound_bytes_[output]; }
  std::size_t outputs() const { return reference_bytes_.size(); }
  std::size_t total_bytes() const { return total_; }

 private:
  // offsets_: the inputs by generation, then the outputs' references by generation, then their
  // bounds by generation
  std::vector<std::size_t> input_bytes_, reference_bytes_, bound_bytes_, offsets_;
  std::size_t total_ = 0;
};

// Draws the inputs of both generations and computes their references into `dst`
// (layout.total_bytes() bytes), in parallel.
void compute_case_data(const Spec& spec, const Case& c, const CaseDataLayout& layout,
                       unsigned char* dst);

}  // namespace kq
