#include "qualify/case_data.hpp"

#include <algorithm>
#include <vector>

#include "expr/reference.hpp"
#include "plan/case_shapes.hpp"
#include "qualify/case_values.hpp"
#include "qualify/compare.hpp"
#include "qualify/reference_samples.hpp"
#include "qualify/shaped_reference.hpp"

namespace kq {
namespace {

constexpr std::size_t kAlign = 64;

std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

TensorView view_of(void* data, DType dtype, Device device, const std::vector<std::int64_t>& shape,
                   const std::vector<std::int64_t>& strides) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.device = device;
  v.rank = static_cast<int>(shape.size());
  for (int d = 0; d < v.rank; ++d) {
    v.shape[d] = shape[static_cast<std::size_t>(d)];
    v.strides[d] = strides[static_cast<std::size_t>(d)];
  }
  return v;
}

void case_reference(const Spec& spec, const Case& c, std::span<const TensorView> inputs,
                    std::span<unsigned char* const> dst, std::span<double* const> bounds) {
  if (spec.op.program) {
    if (!reference_sampled(spec, c))
      return shaped_reference(*spec.op.program, c.dims, inputs, dst, bounds);
    const std::vector<std::vector<std::int64_t>> samples = reference_samples(spec, c);
    shaped_reference(*spec.op.program, c.dims, inputs, dst, bounds, &samples);
    return;
  }
  eval_reference(spec.op.semantics, inputs,
                 view_of(dst[0], spec.op.dtype, Device::cpu, c.shape, row_major_strides(c.shape)));
}

Span span_of(const std::vector<std::int64_t>& shape, const Placement& place) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return {};  // no elements
  const auto strides = place.strides.empty() ? row_major_strides(shape) : place.strides;
  Span s;
  std::int64_t hi = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int64_t reach = (shape[i] - 1) * strides[i];
    (reach < 0 ? s.min_elem : hi) += reach;
  }
  s.elems = hi - s.min_elem + 1;
  return s;
}

CaseDataLayout::CaseDataLayout(const Spec& spec, const Case& c) {
  const CaseShapes shapes = case_shapes(spec, c);
  for (const CaseTensorShape& t : shapes.inputs)
    input_bytes_.push_back(static_cast<std::size_t>(span_of(t.shape, t.place).elems) *
                           dtype_size(t.dtype));
  const std::vector<OutputRule> rules = output_rules(spec, c);
  for (std::size_t o = 0; o < shapes.outputs.size(); ++o) {
    const auto n = static_cast<std::size_t>(rules[o].compared(shapes.outputs[o].numel()));
    reference_bytes_.push_back(n * dtype_size(shapes.outputs[o].dtype));
    bound_bytes_.push_back(rules[o].by_bound() ? n * sizeof(double) : 0);
  }
  for (int g = 0; g < kGenerations; ++g)
    for (std::size_t b : input_bytes_) {
      offsets_.push_back(total_);
      total_ += aligned(b);
    }
  for (int g = 0; g < kGenerations; ++g)
    for (std::size_t b : reference_bytes_) {
      offsets_.push_back(total_);
      total_ += aligned(b);
    }
  for (int g = 0; g < kGenerations; ++g)
    for (std::size_t b : bound_bytes_) {
      offsets_.push_back(total_);
      total_ += aligned(b);
    }
}

std::size_t CaseDataLayout::input_offset(std::size_t input, int generation) const {
  return offsets_[static_cast<std::size_t>(generation) * input_bytes_.size() + input];
}

std::size_t CaseDataLayout::reference_offset(int generation, std::size_t output) const {
  return offsets_[kGenerations * input_bytes_.size() +
                  static_cast<std::size_t>(generation) * reference_bytes_.size() + output];
}

std::size_t CaseDataLayout::bound_offset(int generation, std::size_t output) const {
  return offsets_[kGenerations * (input_bytes_.size() + reference_bytes_.size()) +
                  static_cast<std::size_t>(generation) * bound_bytes_.size() + output];
}

void compute_case_data(const Spec& spec, const Case& c, const CaseDataLayout& layout,
                       unsigned char* dst) {
  const CaseShapes shapes = case_shapes(spec, c);
  for (int g = 0; g < kGenerations; ++g) {
    std::vector<TensorView> inputs;
    for (std::size_t i = 0; i < shapes.inputs.size(); ++i) {
      const CaseTensorShape& t = shapes.inputs[i];
      unsigned char* span = dst + layout.input_offset(i, g);
      const Span s = span_of(t.shape, t.place);
      fill_case_input(spec, c, static_cast<int>(i), span, s.elems, static_cast<std::uint64_t>(g));
      inputs.push_back(view_of(
          span + static_cast<std::size_t>(-s.min_elem) * dtype_size(t.dtype), t.dtype, Device::cpu,
          t.shape, t.place.strides.empty() ? row_major_strides(t.shape) : t.place.strides));
    }
    std::vector<unsigned char*> refs;
    std::vector<double*> bounds;
    for (std::size_t o = 0; o < layout.outputs(); ++o) {
      refs.push_back(dst + layout.reference_offset(g, o));
      bounds.push_back(layout.bound_bytes(o)
                           ? reinterpret_cast<double*>(dst + layout.bound_offset(g, o))
                           : nullptr);
    }
    case_reference(spec, c, inputs, refs, bounds);
  }
}

}  // namespace kq
