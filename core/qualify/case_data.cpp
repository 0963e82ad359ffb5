#include "qualify/case_data.hpp"

#include <algorithm>
#include <vector>

#include "expr/reference.hpp"
#include "qualify/values.hpp"

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
                    unsigned char* dst) {
  eval_reference(spec.op.semantics, inputs,
                 view_of(dst, spec.op.dtype, Device::cpu, c.shape, row_major_strides(c.shape)));
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
  const std::size_t es = dtype_size(spec.op.dtype);
  for (const Placement& p : c.inputs)
    input_bytes_.push_back(static_cast<std::size_t>(span_of(c.shape, p).elems) * es);
  reference_bytes_ = static_cast<std::size_t>(c.numel()) * es;
  for (int g = 0; g < kGenerations; ++g)
    for (std::size_t b : input_bytes_) {
      offsets_.push_back(total_);
      total_ += aligned(b);
    }
  for (int g = 0; g < kGenerations; ++g) {
    offsets_.push_back(total_);
    total_ += aligned(reference_bytes_);
  }
}

std::size_t CaseDataLayout::input_offset(std::size_t input, int generation) const {
  return offsets_[static_cast<std::size_t>(generation) * input_bytes_.size() + input];
}

std::size_t CaseDataLayout::reference_offset(int generation) const {
  return offsets_[kGenerations * input_bytes_.size() + static_cast<std::size_t>(generation)];
}

void compute_case_data(const Spec& spec, const Case& c, const CaseDataLayout& layout,
                       unsigned char* dst) {
  const DType dt = spec.op.dtype;
  const std::size_t es = dtype_size(dt);
  for (int g = 0; g < kGenerations; ++g) {
    std::vector<TensorView> inputs;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      unsigned char* span = dst + layout.input_offset(i, g);
      const Span s = span_of(c.shape, c.inputs[i]);
      fill_input_values(c, static_cast<int>(i), dt, span, s.elems, static_cast<std::uint64_t>(g));
      const auto& place = c.inputs[i];
      inputs.push_back(view_of(span + static_cast<std::size_t>(-s.min_elem) * es, dt, Device::cpu,
                               c.shape,
                               place.strides.empty() ? row_major_strides(c.shape) : place.strides));
    }
    case_reference(spec, c, inputs, dst + layout.reference_offset(g));
  }
}

}  // namespace kq
