#include "indexed/subscript_range.hpp"

#include <algorithm>
#include <limits>

namespace kq::ix {
namespace {

using Interval = IndexRange;

// Saturating: dims up to 2^40 multiply past int64, and a saturated end is out of any tensor.
std::int64_t saturate(bool overflowed, std::int64_t v, bool negative) {
  if (!overflowed) return v;
  return negative ? std::numeric_limits<std::int64_t>::min()
                  : std::numeric_limits<std::int64_t>::max();
}

std::int64_t add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  const bool overflowed = __builtin_add_overflow(a, b, &r);
  return saturate(overflowed, r, a < 0);
}

std::int64_t mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  const bool overflowed = __builtin_mul_overflow(a, b, &r);
  return saturate(overflowed, r, (a < 0) != (b < 0));
}

std::int64_t negate(std::int64_t a) {
  return a == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max()
                                                       : -a;
}

// The quotients of the multiples of `by` (> 0) in [a.lo, a.hi]; empty (lo > hi) where none is.
Interval divided(Interval a, std::int64_t by) {
  const auto floor_div = [by](std::int64_t v) { return v / by - (v % by < 0 ? 1 : 0); };
  return {-floor_div(negate(a.lo)), floor_div(a.hi)};
}

Interval operator*(Interval a, Interval b) {
  const std::int64_t c[] = {mul(a.lo, b.lo), mul(a.lo, b.hi), mul(a.hi, b.lo), mul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

class RangeCheck {
 public:
  RangeCheck(const Program& p, const std::vector<std::int64_t>& dims) : p_(p), dims_(dims) {}

  std::optional<OutOfRange> run() {
    for (const Statement& s : p_.statements) {
      // Every index variable ranges over [0, extent); an empty range makes the accesses under
      // it never happen.
      const bool empty = std::any_of(s.lhs.begin(), s.lhs.end(), [&](int v) { return !extent(v); });
      if (empty) continue;
      if (auto bad = walk(s, s.root)) return bad;
    }
    return std::nullopt;
  }

 private:
  std::int64_t extent(int var) const {
    const Extent& e = p_.indices[static_cast<std::size_t>(var)].extent;
    return e.is_dim() ? dims_[static_cast<std::size_t>(e.dim)] : e.constant;
  }

  // Every access under `node` whose subscripts are index arithmetic.
  std::optional<OutOfRange> walk(const Statement& s, int node) {
    const Node& n = p_.nodes[static_cast<std::size_t>(node)];
    if (n.kind == NodeKind::reduce || n.kind == NodeKind::scan)
      for (const int v : n.over)
        if (extent(v) == 0) return std::nullopt;
    if (n.kind == NodeKind::access) {
      const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(n.ref)];
      // A padded input is read anywhere: outside its extent it gives its pad.
      for (std::size_t d = 0; !t.pad && d < n.args.size(); ++d) {
        const std::optional<Interval> r = range(n.args[d]);
        if (!r) continue;  // a gather
        const Extent& e = t.shape[d];
        const std::int64_t size = e.is_dim() ? dims_[static_cast<std::size_t>(e.dim)] : e.constant;
        if ((r->lo >= 0 && r->hi < size) || r->lo > r->hi) continue;  // in range, or no position
        const std::int64_t at = r->lo < 0 ? r->lo : r->hi;
        return OutOfRange{n.ref, d, r->lo, r->hi,
                          "line " + std::to_string(s.line) + " `" + s.text + "`: subscript " +
                              std::to_string(d + 1) + " of '" + t.name + "' reaches " +
                              std::to_string(at) + ", outside [0, " + std::to_string(size) + ")"};
      }
    }
    // A gather's own subscripts (t[m] in x[m, t[m]]) are accesses too.
    for (const int a : n.args)
      if (auto bad = walk(s, a)) return bad;
    return std::nullopt;
  }

  // The values a subscript expression takes, or nullopt where it reads a tensor.
 public:
  std::optional<Interval> range(int node) const {
    const Node& n = p_.nodes[static_cast<std::size_t>(node)];
    switch (n.kind) {
      case NodeKind::index:
        return Interval{0, std::max<std::int64_t>(extent(n.ref) - 1, 0)};
      case NodeKind::dim: {
        const std::int64_t v = dims_[static_cast<std::size_t>(n.ref)];
        return Interval{v, v};
      }
      case NodeKind::number:
        return Interval{static_cast<std::int64_t>(n.value), static_cast<std::int64_t>(n.value)};
      case NodeKind::apply: {
        std::optional<Interval> a = range(n.args[0]);
        if (!a) return std::nullopt;
        if (n.op == Op::neg) return Interval{negate(a->hi), negate(a->lo)};
        if (n.args.size() < 2) return std::nullopt;
        const std::optional<Interval> b = range(n.args[1]);
        if (!b) return std::nullopt;
        if (n.op == Op::add) return Interval{add(a->lo, b->lo), add(a->hi, b->hi)};
        if (n.op == Op::sub) return Interval{add(a->lo, negate(b->hi)), add(a->hi, negate(b->lo))};
        if (n.op == Op::mul) return *a * *b;
        // (e) / S as a whole subscript: the positions are the multiples of S in e's range.
        if (n.op == Op::div && b->lo == b->hi && b->lo > 0) return divided(*a, b->lo);
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

 private:
  const Program& p_;
  const std::vector<std::int64_t>& dims_;
};

}  // namespace

std::optional<OutOfRange> first_out_of_range(const Program& p,
                                             const std::vector<std::int64_t>& dims) {
  return RangeCheck(p, dims).run();
}

std::optional<std::string> subscript_out_of_range(const Program& p,
                                                  const std::vector<std::int64_t>& dims) {
  if (auto bad = first_out_of_range(p, dims)) return bad->message;
  return std::nullopt;
}

}  // namespace kq::ix

namespace kq::ix {

std::optional<IndexRange> subscript_values(const Program& p, int node,
                                           const std::vector<std::int64_t>& dims) {
  return RangeCheck(p, dims).range(node);
}

}  // namespace kq::ix
