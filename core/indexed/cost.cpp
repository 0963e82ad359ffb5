#include "indexed/cost.hpp"

namespace kq::ix {
namespace {

class Counter {
 public:
  Counter(const Program& p, std::vector<double> dims) : p_(p), dims_(std::move(dims)) {}

  double extent(const Extent& e) const {
    return e.is_dim() ? dims_[static_cast<std::size_t>(e.dim)] : static_cast<double>(e.constant);
  }

  double numel(const TensorDecl& t) const {
    double n = 1.0;
    for (const Extent& e : t.shape) n *= extent(e);
    return n;
  }

  // FLOPs of one evaluation of `node`.
  double flops(int node) const {
    const Node& n = p_.nodes[static_cast<std::size_t>(node)];
    switch (n.kind) {
      case NodeKind::apply: {
        double f = 1.0;
        for (int a : n.args) f += flops(a);
        return f;
      }
      case NodeKind::reduce: {
        double count = 1.0;
        for (int v : n.over) count *= extent(p_.indices[static_cast<std::size_t>(v)].extent);
        return count * (flops(n.args[0]) + 1.0);
      }
      case NodeKind::scan:
        return flops(n.args[0]) + 1.0;
      default:
        return 0.0;
    }
  }

 private:
  const Program& p_;
  std::vector<double> dims_;
};

}  // namespace

Cost default_cost(const Program& p, const DimValues& dims) {
  std::vector<double> values;
  for (const DimDecl& d : p.decls.dims) {
    auto it = dims.find(d.name);
    if (it == dims.end()) throw EvalError("no value for dim '" + d.name + "'");
    values.push_back(static_cast<double>(it->second));
  }
  const Counter counter(p, std::move(values));
  Cost cost;
  for (const TensorDecl& t : p.decls.tensors)
    if (t.role != Role::temporary)
      cost.bytes += counter.numel(t) * static_cast<double>(dtype_size(t.dtype));
  for (const Statement& s : p.statements)
    cost.flops +=
        counter.numel(p.decls.tensors[static_cast<std::size_t>(s.tensor)]) * counter.flops(s.root);
  return cost;
}

}  // namespace kq::ix
