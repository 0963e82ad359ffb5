#include "qualify/exact_integers.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "qualify/case_values.hpp"
#include "spec/shaped.hpp"

namespace kq {
namespace {

using Magnitude = std::optional<double>;  // nullopt: not exact

class Analysis {
 public:
  Analysis(const ix::Program& p, const std::vector<std::int64_t>& dims, DType compute)
      : p_(p), dims_(dims), limit_(1.0 / unit_roundoff(compute)), tensors_(p.decls.tensors.size()) {
    for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
      if (p.decls.tensors[t].role == ix::Role::input) tensors_[t] = input(static_cast<int>(t));
    for (const ix::Statement& s : p.statements)
      tensors_[static_cast<std::size_t>(s.tensor)] = node(s.root);
  }
  Magnitude of(int tensor) const { return tensors_[static_cast<std::size_t>(tensor)]; }

 private:
  double extent(const ix::Extent& e) const {
    return static_cast<double>(e.is_dim() ? dims_.at(static_cast<std::size_t>(e.dim)) : e.constant);
  }

  Magnitude input(int t) const {
    const DType d = p_.decls.tensors[static_cast<std::size_t>(t)].dtype;
    if (d == DType::boolean) return 1.0;
    if (!is_integer(d)) {  // a pad is read too: an infinity or a fraction makes it inexact
      const std::optional<double>& pad = p_.decls.tensors[static_cast<std::size_t>(t)].pad;
      if (!pad) return static_cast<double>(kIntegerClassMax);
      const Magnitude m = integral(*pad);
      if (!m) return std::nullopt;
      return std::max(*m, static_cast<double>(kIntegerClassMax));
    }
    const auto g = gather_range(p_, t, dims_);
    if (!g) return static_cast<double>(kSmallIntegerMax);
    return static_cast<double>(std::max({std::int64_t{0}, std::abs(g->lo), std::abs(g->hi)}));
  }

  static Magnitude integral(double v) {
    if (!std::isfinite(v) || v != std::floor(v)) return std::nullopt;
    return std::fabs(v);
  }

  // Every node's magnitude within the compute type's exact integers.
  Magnitude node(int i) const {
    const Magnitude m = unchecked(i);
    if (m && *m > limit_) return std::nullopt;
    return m;
  }

  Magnitude unchecked(int i) const {
    const ix::Node& n = p_.nodes[static_cast<std::size_t>(i)];
    switch (n.kind) {
      case ix::NodeKind::number:
        return integral(n.value);
      case ix::NodeKind::param:
        return integral(p_.decls.params[static_cast<std::size_t>(n.ref)].value);
      case ix::NodeKind::dim:
        return static_cast<double>(dims_.at(static_cast<std::size_t>(n.ref)));
      case ix::NodeKind::index:
        return extent(p_.indices[static_cast<std::size_t>(n.ref)].extent);
      case ix::NodeKind::access:  // its subscripts are index arithmetic, exact in integers
        return tensors_[static_cast<std::size_t>(n.ref)];
      case ix::NodeKind::apply:
        return apply(n);
      case ix::NodeKind::reduce:
        return reduce(n);
      case ix::NodeKind::scan: {
        if (n.scan != ix::ScanKind::cumsum) return std::nullopt;
        const Magnitude body = node(n.args[0]);
        if (!body) return std::nullopt;
        return extent(p_.indices[static_cast<std::size_t>(n.over[0])].extent) * *body;
      }
    }
    return std::nullopt;
  }

  Magnitude apply(const ix::Node& n) const {
    Magnitude a[3];
    for (std::size_t k = 0; k < n.args.size() && k < 3; ++k) {
      a[k] = node(n.args[k]);
      if (!a[k]) return std::nullopt;
    }
    switch (n.op) {
      case Op::neg:
      case Op::abs:
      case Op::relu:
        return a[0];
      case Op::add:
      case Op::sub:
        return *a[0] + *a[1];
      case Op::mul:
        return *a[0] * *a[1];
      case Op::max:
      case Op::min:
        return std::max(*a[0], *a[1]);
      case Op::lt:
      case Op::le:
      case Op::gt:
      case Op::ge:
      case Op::eq:
      case Op::ne:
        return 1.0;
      case Op::select:  // the condition exact too: else a rounding could pick the other branch
        return std::max(*a[1], *a[2]);
      case Op::clamp:
        return std::max({*a[0], *a[1], *a[2]});
      default:
        return std::nullopt;
    }
  }

  Magnitude reduce(const ix::Node& n) const {
    double count = 1.0;
    for (int v : n.over) count *= extent(p_.indices[static_cast<std::size_t>(v)].extent);
    const Magnitude body = node(n.args[0]);
    if (!body) return std::nullopt;
    switch (n.reduction) {
      case ix::Reduction::sum:
        return count * *body;
      case ix::Reduction::max:
      case ix::Reduction::min:
        return body;
      case ix::Reduction::argmax:
      case ix::Reduction::argmin:
        return count;
      case ix::Reduction::prod:
        return std::nullopt;
    }
    return std::nullopt;
  }

  const ix::Program& p_;
  const std::vector<std::int64_t>& dims_;
  double limit_;
  std::vector<Magnitude> tensors_;
};

}  // namespace

bool exact_integer_output(const ix::Program& p, int tensor, const std::vector<std::int64_t>& dims,
                          DType compute) {
  const ix::TensorDecl& t = p.decls.tensors.at(static_cast<std::size_t>(tensor));
  if (t.role != ix::Role::output) return false;
  if (is_integer(t.dtype)) return true;
  const Magnitude m = Analysis(p, dims, compute).of(tensor);
  return m && *m <= 1.0 / unit_roundoff(t.dtype);
}

}  // namespace kq
