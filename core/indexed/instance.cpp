#include "indexed/instance.hpp"

namespace kq::ix {
namespace {

std::int64_t extent_value(const Extent& e, const std::vector<std::int64_t>& dims) {
  return e.is_dim() ? dims[static_cast<std::size_t>(e.dim)] : e.constant;
}

// Node i as an affine index expression (its args' folded first: they come before it).
AffineIndex fold(const Program& p, const std::vector<std::int64_t>& dims,
                 const std::vector<AffineIndex>& done, int i) {
  const Node& n = p.nodes[static_cast<std::size_t>(i)];
  AffineIndex a;
  switch (n.kind) {
    case NodeKind::number:
      a.ok = true;
      a.c = static_cast<std::int64_t>(n.value);
      return a;
    case NodeKind::dim:
      a.ok = true;
      a.c = dims[static_cast<std::size_t>(n.ref)];
      return a;
    case NodeKind::index:
      a.ok = true;
      a.n = 1;
      a.var[0] = n.ref;
      a.coef[0] = 1;
      return a;
    case NodeKind::apply:
      break;
    default:
      return a;
  }
  for (int arg : n.args)
    if (arg >= i || !done[static_cast<std::size_t>(arg)].ok) return a;
  auto arg = [&](std::size_t k) { return done[static_cast<std::size_t>(n.args[k])]; };
  // x + s * y, merging y's terms into x's.
  auto add = [](AffineIndex x, const AffineIndex& y, std::int64_t s) {
    x.c += s * y.c;
    for (int k = 0; k < y.n; ++k) {
      int at = 0;
      while (at < x.n && x.var[static_cast<std::size_t>(at)] != y.var[static_cast<std::size_t>(k)])
        ++at;
      if (at == x.n) {
        if (x.n == AffineIndex::kMaxVars) return AffineIndex{};
        x.var[static_cast<std::size_t>(x.n)] = y.var[static_cast<std::size_t>(k)];
        ++x.n;
      }
      x.coef[static_cast<std::size_t>(at)] += s * y.coef[static_cast<std::size_t>(k)];
    }
    return x;
  };
  switch (n.op) {
    case Op::add:
      return add(arg(0), arg(1), 1);
    case Op::sub:
      return add(arg(0), arg(1), -1);
    case Op::neg:
      return add(AffineIndex{.ok = true}, arg(0), -1);
    case Op::mul: {
      AffineIndex x = arg(0), y = arg(1);
      if (x.n > 0) std::swap(x, y);
      if (x.n > 0) return a;  // a product of two indices
      for (int k = 0; k < y.n; ++k) y.coef[static_cast<std::size_t>(k)] *= x.c;
      y.c *= x.c;
      return y;
    }
    default:
      return a;
  }
}

}  // namespace

std::int64_t Instance::numel(int tensor) const {
  std::int64_t n = 1;
  for (std::int64_t e : shapes[static_cast<std::size_t>(tensor)]) n *= e;
  return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

Instance make_instance(const Program& p, const DimValues& dims, const Tensors& inputs) {
  Instance in;
  in.program = &p;
  for (const DimDecl& d : p.decls.dims) {
    auto it = dims.find(d.name);
    if (it == dims.end()) throw EvalError("no value for dim '" + d.name + "'");
    if (it->second < 0)
      throw EvalError("dim '" + d.name + "' = " + std::to_string(it->second) + " is negative");
    in.dims.push_back(it->second);
  }
  for (const IndexVar& v : p.indices) in.extents.push_back(extent_value(v.extent, in.dims));
  for (const TensorDecl& t : p.decls.tensors) {
    std::vector<std::int64_t> shape;
    for (const Extent& e : t.shape) shape.push_back(extent_value(e, in.dims));
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    const Buffer* buffer = nullptr;
    if (t.role == Role::input) {
      auto it = inputs.find(t.name);
      if (it == inputs.end()) throw EvalError("no buffer for input '" + t.name + "'");
      buffer = &it->second;
      if (buffer->dtype != t.dtype)
        throw EvalError("input '" + t.name + "' is declared " + std::string(to_string(t.dtype)) +
                        " but its buffer is " + std::string(to_string(buffer->dtype)));
      if (buffer->shape != shape ||
          buffer->size_bytes() != static_cast<std::size_t>(buffer->numel()) * dtype_size(t.dtype))
        throw EvalError("input '" + t.name + "' has shape " + shape_text(shape) +
                        " for these dims but its buffer has shape " + shape_text(buffer->shape));
    }
    in.shapes.push_back(std::move(shape));
    in.strides.push_back(std::move(strides));
    in.inputs.push_back(buffer);
  }
  in.affine.reserve(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i)
    in.affine.push_back(fold(p, in.dims, in.affine, static_cast<int>(i)));
  int next = 0;
  for (const Statement& s : p.statements) {
    in.first_node.push_back(next);
    next = s.root + 1;
  }
  return in;
}

}  // namespace kq::ix
