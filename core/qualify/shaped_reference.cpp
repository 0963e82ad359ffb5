#include "qualify/shaped_reference.hpp"

#include <cstring>
#include <string>

#include "indexed/evaluate.hpp"
#include "util/parallel_copy.hpp"

namespace kq {

std::int64_t element_offset(const TensorView& v, std::int64_t logical) {
  std::int64_t off = 0;
  for (int d = v.rank - 1; d >= 0; --d) {
    off += (logical % v.shape[d]) * v.strides[d];
    logical /= v.shape[d];
  }
  return off;
}

ix::Buffer dense_copy(const TensorView& v) {
  ix::Buffer b;
  b.dtype = v.dtype;
  b.shape.assign(v.shape.begin(), v.shape.begin() + v.rank);
  const std::size_t es = dtype_size(v.dtype);
  const std::int64_t n = v.numel();
  b.bytes.resize(static_cast<std::size_t>(n) * es);  // not zeroed: HostBytes
  if (n == 0) return b;
  if (v.is_contiguous()) {
    parallel_memcpy(b.bytes.data(), v.data, b.bytes.size());
    return b;
  }
  const auto* base = static_cast<const unsigned char*>(v.data);
  for (std::int64_t i = 0; i < n; ++i)
    std::memcpy(b.bytes.data() + static_cast<std::size_t>(i) * es,
                base + element_offset(v, i) * static_cast<std::int64_t>(es), es);
  return b;
}

namespace {

// The outputs at their samples: one evaluate_at walk for all of them, so that the temporaries
// they share are computed once.
void sampled_reference(const ix::Program& p, const ix::DimValues& dims, const ix::Tensors& in,
                       std::span<unsigned char* const> dst, std::span<double* const> bounds,
                       const std::vector<std::vector<std::int64_t>>& samples) {
  std::vector<ix::Sample> all;
  std::vector<const ix::TensorDecl*> outputs;
  bool any_bound = false;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role != ix::Role::output) continue;
    const std::size_t k = outputs.size();
    outputs.push_back(&t);
    any_bound = any_bound || (k < bounds.size() && bounds[k]);
    std::vector<std::int64_t> shape;
    for (const ix::Extent& e : t.shape) shape.push_back(e.is_dim() ? dims.at(e.name) : e.constant);
    for (std::int64_t linear : samples.at(k)) all.push_back({t.name, ix::coord_of(shape, linear)});
  }
  const ix::SampledEvaluation e =
      any_bound ? ix::evaluate_at_with_bounds(p, dims, in, all)
                : ix::SampledEvaluation{ix::evaluate_at(p, dims, in, all), {}};
  std::size_t next = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::size_t es = dtype_size(outputs[k]->dtype);
    const bool bounded = k < bounds.size() && bounds[k];
    for (std::size_t j = 0; j < samples[k].size(); ++j, ++next) {
      ix::Buffer one = ix::Buffer::zeros(outputs[k]->dtype, {});
      one.set(0, e.values[next]);  // exact: the value is the dtype's already
      std::memcpy(dst[k] + j * es, one.bytes.data(), es);
      if (bounded) bounds[k][j] = e.bounds[next];
    }
  }
}

}  // namespace

void shaped_reference(const ix::Program& p, const std::vector<std::int64_t>& dims,
                      std::span<const TensorView> inputs, std::span<unsigned char* const> dst,
                      std::span<double* const> bounds,
                      const std::vector<std::vector<std::int64_t>>* samples) {
  ix::DimValues dim_values;
  for (std::size_t d = 0; d < p.decls.dims.size(); ++d) dim_values[p.decls.dims[d].name] = dims[d];
  ix::Tensors in;
  std::size_t next_input = 0;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role != ix::Role::input) continue;
    const TensorView& v = inputs[next_input++];
    std::vector<std::int64_t> shape(v.shape.begin(), v.shape.begin() + v.rank);
    in[t.name] =
        v.is_contiguous() ? ix::Buffer::borrow(v.dtype, std::move(shape), v.data) : dense_copy(v);
  }
  if (samples) return sampled_reference(p, dim_values, in, dst, bounds, *samples);
  std::vector<int> bounded;         // by tensor position
  ix::Places places, bound_places;  // every output and bound straight into dst and bounds
  std::size_t k = 0;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
    if (p.decls.tensors[t].role != ix::Role::output) continue;
    if (k < bounds.size() && bounds[k]) {
      bounded.push_back(static_cast<int>(t));
      bound_places[p.decls.tensors[t].name] = bounds[k];
    }
    places[p.decls.tensors[t].name] = dst[k];
    ++k;
  }
  const ix::Evaluation e =
      ix::evaluate_with_bounds(p, dim_values, in, bounded, places, bound_places);
  k = 0;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role != ix::Role::output) continue;
    const ix::Buffer& b = e.outputs.at(t.name);
    if (b.data() != dst[k]) parallel_memcpy(dst[k], b.data(), b.size_bytes());
    if (k < bounds.size() && bounds[k]) {
      const ix::Buffer& eb = e.bounds.at(t.name);
      if (eb.data() != reinterpret_cast<const unsigned char*>(bounds[k]))
        parallel_memcpy(bounds[k], eb.data(), eb.size_bytes());
    }
    ++k;
  }
}

}  // namespace kq
