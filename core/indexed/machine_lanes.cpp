// Machine's walk of kLanes neighbouring elements at once: a node at a time for all of them, so
// that the tree walk, an op's dispatch and an access's subscripts are paid once a run instead of
// once an element. The reference of a 1.6G-element point is computed three times a run (two
// generations, then the timing's), and one element at a time it took most of a KernelBench
// task's minutes on the H200. Every lane gets eval()'s bits: the same ref:: operation on the same
// operands, and where a node cannot be walked a run at a time (a reduction, a scan, a gather
// along the lanes) each lane goes through eval() itself.
#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "indexed/machine.hpp"
#include "kq/semantics.hpp"

namespace kq::ix {
namespace {

std::atomic<bool> lanes_on{true};

// How `node`'s value, as a subscript, depends on `var`: 0 not at all, 1 as a + b * var, -1
// otherwise (or not an index expression).
int degree(const Program& p, int node, int var) {
  const Node& n = p.nodes[static_cast<std::size_t>(node)];
  switch (n.kind) {
    case NodeKind::number:
    case NodeKind::dim:
      return 0;
    case NodeKind::index:
      return n.ref == var ? 1 : 0;
    case NodeKind::access:  // a gather: its value is the same at every lane unless it reads var
      for (int a : n.args)
        if (degree(p, a, var) != 0) return -1;
      return 0;
    case NodeKind::apply: {
      if (n.op != Op::add && n.op != Op::sub && n.op != Op::mul && n.op != Op::neg) return -1;
      int d[2] = {0, 0};
      for (std::size_t k = 0; k < n.args.size() && k < 2; ++k) {
        d[k] = degree(p, n.args[k], var);
        if (d[k] < 0) return -1;
      }
      const int total = n.op == Op::mul ? d[0] + d[1] : std::max(d[0], d[1]);
      return total <= 1 ? total : -1;
    }
    default:
      return -1;
  }
}

// The lanes l in [0, count) whose subscript at + l * delta lies in [0, extent): a run [lo, hi),
// empty where lo >= hi.
std::pair<int, int> lanes_in_range(std::int64_t at, std::int64_t delta, std::int64_t extent,
                                   int count) {
  const auto floor_div = [](std::int64_t a, std::int64_t b) {  // b > 0
    return a >= 0 ? a / b : -((-a + b - 1) / b);
  };
  const auto ceil_div = [&](std::int64_t a, std::int64_t b) { return -floor_div(-a, b); };
  std::int64_t lo = 0, hi = count;  // lanes [lo, hi)
  if (delta == 0) {
    if (at < 0 || at >= extent) hi = 0;
  } else if (delta > 0) {
    lo = std::max(lo, ceil_div(-at, delta));
    hi = std::min(hi, floor_div(extent - 1 - at, delta) + 1);
  } else {
    lo = std::max(lo, ceil_div(at - (extent - 1), -delta));
    hi = std::min(hi, floor_div(at, -delta) + 1);
  }
  return {static_cast<int>(std::min<std::int64_t>(lo, count)),
          static_cast<int>(std::max<std::int64_t>(hi, 0))};
}

}  // namespace

void set_reference_lanes(bool on) { lanes_on = on; }
bool reference_lanes() { return lanes_on; }

template <class One>
void Machine::lane_by_lane(Frame& f, int var, int count, LaneTerms& out, One&& one) {
  Restore<std::int64_t> keep(index_of(f, var));
  for (int l = 0; l < count; ++l) {
    keep.slot = keep.saved + l;
    const Term t = one();
    out.v[l] = t.v;
    out.e[l] = t.e;
  }
}

const Machine::LaneTerms& Machine::element_lanes(Frame& f, int var, int count) {
  const Statement& s = p_.statements[static_cast<std::size_t>(f.statement)];
  const Restore<std::int64_t> keep(index_of(f, var));
  return lanes(s.root, f, var, count, lanes_floor_);
}

const Machine::LaneTerms& Machine::lanes(int node, Frame& f, int var, int count,
                                         std::size_t depth) {
  if (pool_.size() <= depth) pool_.resize(depth + 1);
  if (!pool_[depth]) pool_[depth] = std::make_unique<LaneTerms>();
  LaneTerms& out = *pool_[depth];
  const auto same = [&](const Term& t) {
    for (int l = 0; l < count; ++l) {
      out.v[l] = t.v;
      out.e[l] = t.e;
    }
    return std::cref(out);
  };
  const auto one_by_one = [&] {
    // A reduction's own runs (reduce_range) start above this slot.
    const Restore<std::size_t> raised(lanes_floor_);
    lanes_floor_ = depth + 1;
    lane_by_lane(f, var, count, out, [&] { return eval(node, f); });
    return std::cref(out);
  };
  if (node == given_) return same(given_value_);
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  switch (n.kind) {
    case NodeKind::number:
    case NodeKind::param:
    case NodeKind::dim:
      return same(eval(node, f));
    case NodeKind::index: {
      if (n.ref != var) return same(eval(node, f));
      const std::int64_t first = f.idx[static_cast<std::size_t>(var)];
      for (int l = 0; l < count; ++l) {
        out.v[l] = static_cast<double>(first + l);
        out.e[l] = 0.0;
      }
      return out;
    }
    case NodeKind::access:
      read_lanes(node, f, var, count, out);
      return out;
    case NodeKind::apply:
      break;
    case NodeKind::reduce:
      if (!reduce_by_lanes(n, var, count)) return one_by_one();
      reduce_lanes(n, f, var, count, depth, out);
      return out;
    default:  // a scan: each lane's own walk
      return one_by_one();
  }
  // Operand k in the slot depth + 1 + k: its own operands' slots come after it, so the ones
  // already computed stay.
  static const LaneTerms zeros{};
  const LaneTerms* a[3] = {&zeros, &zeros, &zeros};
  for (std::size_t k = 0; k < n.args.size() && k < 3; ++k)
    a[k] = &lanes(n.args[k], f, var, count, depth + 1 + k);
  ref::visit_op(n.op, [&]<Op o>() {
    for (int l = 0; l < count; ++l) out.v[l] = ref::apply<o>(a[0]->v[l], a[1]->v[l], a[2]->v[l]);
  });
  for (int l = 0; l < count; ++l) {
    if (!bounds_) {
      out.e[l] = 0.0;
      continue;
    }
    const Term t[3] = {
        {a[0]->v[l], a[0]->e[l]}, {a[1]->v[l], a[1]->e[l]}, {a[2]->v[l], a[2]->e[l]}};
    out.e[l] = apply_bound(n.op, t, out.v[l]);
  }
  return out;
}

bool Machine::reduce_by_lanes(const Node& n, int var, int count) {
  if (is_arg(n.reduction) || n.over.empty()) return false;
  const std::int64_t inner = in_.extents[static_cast<std::size_t>(n.over.back())];
  return term_count(n) <= kReduceChunk && std::min<std::int64_t>(inner, kLanes) < count &&
         reads_evenly(n.args[0], var);
}

bool Machine::reads_evenly(int node, int var) {
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  if (n.kind == NodeKind::access) return affine_access(node, var);  // its subscripts' degree
  for (int a : n.args)
    if (!reads_evenly(a, var)) return false;
  return true;
}

void Machine::reduce_lanes(const Node& n, Frame& f, int var, int count, std::size_t depth,
                           LaneTerms& out) {
  const std::int64_t terms = term_count(n);
  std::vector<Part> parts(static_cast<std::size_t>(count), Part(accumulation_of(n.reduction)));
  for (std::int64_t k = 0; k < terms; ++k) {
    enter_term(n, f, k);
    const LaneTerms& t = lanes(n.args[0], f, var, count, depth + 1);
    for (int l = 0; l < count; ++l)
      add_term(n.reduction, parts[static_cast<std::size_t>(l)], {t.v[l], t.e[l]});
  }
  for (int l = 0; l < count; ++l) {
    const Term r = combine(n, {&parts[static_cast<std::size_t>(l)], 1});
    out.v[l] = r.v;
    out.e[l] = r.e;
  }
}

void Machine::read_lanes(int node, Frame& f, int var, int count, LaneTerms& out) {
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  const auto t = static_cast<std::size_t>(n.ref);
  const std::optional<double>& pad = p_.decls.tensors[t].pad;
  // The offsets of the first lane and of the next, and the lanes [lo, hi) where every subscript
  // is in range (each steps evenly, so they are a run).
  std::int64_t offset = 0, step = 0;
  int lo = 0, hi = count;
  const bool even = affine_access(node, var);
  for (std::size_t d = 0; even && d < n.args.size(); ++d) {
    const std::int64_t at0 = subscript(n.args[d], f);
    const std::int64_t delta = lane_step(n.args[d], f, var, at0);
    const auto [from, to] = lanes_in_range(at0, delta, in_.shapes[t][d], count);
    lo = std::max(lo, from);
    hi = std::min(hi, to);
    offset += at0 * in_.strides[t][d];
    step += delta * in_.strides[t][d];
  }
  // Each lane's read() where a lane falls outside without a pad: it names the subscript.
  if (!even || (!pad && (lo > 0 || hi < count)))
    return lane_by_lane(f, var, count, out, [&] { return read(n, f); });
  for (int l = 0; l < count; ++l) {
    if (l >= lo && l < hi) continue;
    out.v[l] = *pad;  // read()'s pad: exact, bound 0
    out.e[l] = 0.0;
  }
  if (lo >= hi) return;
  const std::int64_t at = offset + lo * step;
  if (const Buffer* b = in_.inputs[t]) {  // inputs are exact
    b->get_run(at, step, hi - lo, out.v.data() + lo);
    for (int l = lo; l < hi; ++l) out.e[l] = 0.0;
    return;
  }
  store_.computed_run(n.ref, at, step, hi - lo, out.v.data() + lo, out.e.data() + lo);
}

std::int64_t Machine::lane_step(int node, Frame& f, int var, std::int64_t at) {
  if (static_cast<std::size_t>(node) < in_.affine.size()) {
    if (const AffineIndex& a = in_.affine[static_cast<std::size_t>(node)]; a.ok) {
      std::int64_t delta = 0;
      for (int k = 0; k < a.n; ++k)
        if (a.var[static_cast<std::size_t>(k)] == var) delta += a.coef[static_cast<std::size_t>(k)];
      return delta;
    }
  }
  Restore<std::int64_t> keep(index_of(f, var));
  ++keep.slot;
  return subscript(node, f) - at;
}

bool Machine::affine_access(int node, int var) {
  if (affine_.empty()) affine_.assign(p_.nodes.size(), -1);
  int& known = affine_[static_cast<std::size_t>(node)];
  if (known >= 0 && known / 2 == var) return known % 2 == 1;
  bool yes = true;
  for (int a : p_.nodes[static_cast<std::size_t>(node)].args) yes = yes && degree(p_, a, var) >= 0;
  known = 2 * var + (yes ? 1 : 0);
  return yes;
}

}  // namespace kq::ix
