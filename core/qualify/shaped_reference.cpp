#include "qualify/shaped_reference.hpp"

#include <cstring>
#include <string>

#include "indexed/evaluate.hpp"

namespace kq {
namespace {

// A host view's elements, dense in logical order.
ix::Buffer dense_copy(const TensorView& v) {
  ix::Buffer b;
  b.dtype = v.dtype;
  b.shape.assign(v.shape.begin(), v.shape.begin() + v.rank);
  const std::size_t es = dtype_size(v.dtype);
  const std::int64_t n = v.numel();
  b.bytes.resize(static_cast<std::size_t>(n) * es);
  if (n == 0) return b;
  if (v.is_contiguous()) {
    std::memcpy(b.bytes.data(), v.data, b.bytes.size());
    return b;
  }
  const auto* base = static_cast<const unsigned char*>(v.data);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t off = 0, rest = i;
    for (int d = v.rank - 1; d >= 0; --d) {
      off += (rest % v.shape[d]) * v.strides[d];
      rest /= v.shape[d];
    }
    std::memcpy(b.bytes.data() + static_cast<std::size_t>(i) * es,
                base + off * static_cast<std::int64_t>(es), es);
  }
  return b;
}

}  // namespace

void shaped_reference(const ix::Program& p, const std::vector<std::int64_t>& dims,
                      std::span<const TensorView> inputs, std::span<unsigned char* const> dst,
                      std::span<double* const> bounds) {
  ix::DimValues dim_values;
  for (std::size_t d = 0; d < p.decls.dims.size(); ++d) dim_values[p.decls.dims[d].name] = dims[d];
  ix::Tensors in;
  std::size_t next_input = 0;
  for (const ix::TensorDecl& t : p.decls.tensors)
    if (t.role == ix::Role::input) in[t.name] = dense_copy(inputs[next_input++]);
  std::vector<int> bounded;  // by tensor position
  std::size_t k = 0;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
    if (p.decls.tensors[t].role != ix::Role::output) continue;
    if (k < bounds.size() && bounds[k]) bounded.push_back(static_cast<int>(t));
    ++k;
  }
  const ix::Evaluation e = ix::evaluate_with_bounds(p, dim_values, in, bounded);
  k = 0;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role != ix::Role::output) continue;
    const ix::Buffer& b = e.outputs.at(t.name);
    if (!b.bytes.empty()) std::memcpy(dst[k], b.bytes.data(), b.bytes.size());
    if (k < bounds.size() && bounds[k]) {
      const ix::Buffer& eb = e.bounds.at(t.name);
      if (!eb.bytes.empty()) std::memcpy(bounds[k], eb.bytes.data(), eb.bytes.size());
    }
    ++k;
  }
}

}  // namespace kq
