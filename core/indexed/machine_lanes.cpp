// Machine's walk of kLanes neighbouring elements at once: a node at a time for all of them, so
// that the tree walk, an op's dispatch and an access's subscripts are paid once a run instead of
// once an element. The reference of a 1.6G-element point is computed three times a run (two
// generations, then the timing's), and one element at a time it took most of a KernelBench
// task's minutes on the H200. Every lane gets eval()'s bits: the same ref:: operation on the same
// operands, and where a node cannot be walked a run at a time (a reduction, a scan, a gather
// along the lanes) each lane goes through eval() itself.
#include <atomic>

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
    default:  // a reduction or a scan: each lane's own walk
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

void Machine::read_lanes(int node, Frame& f, int var, int count, LaneTerms& out) {
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  const auto slot = static_cast<std::size_t>(var);
  const std::int64_t first = f.idx[slot];
  const auto t = static_cast<std::size_t>(n.ref);
  // The offsets of the first lane and of the next: where every subscript is in range at the
  // first lane and at the last, it is at every lane between (each steps evenly).
  std::int64_t offset = 0, step = 0;
  bool even = affine_access(node, var);
  for (std::size_t d = 0; even && d < n.args.size(); ++d) {
    const std::int64_t at0 = subscript(n.args[d], f);
    f.idx[slot] = first + 1;
    const std::int64_t at1 = subscript(n.args[d], f);
    f.idx[slot] = first;
    const std::int64_t last = at0 + (count - 1) * (at1 - at0);
    const std::int64_t extent = in_.shapes[t][d];
    even = at0 >= 0 && at0 < extent && last >= 0 && last < extent;
    offset += at0 * in_.strides[t][d];
    step += (at1 - at0) * in_.strides[t][d];
  }
  if (!even)  // each lane's read(), which names a subscript out of range
    return lane_by_lane(f, var, count, out, [&] { return read(n, f); });
  if (const Buffer* b = in_.inputs[t]) {  // inputs are exact
    b->get_run(offset, step, count, out.v.data());
    for (int l = 0; l < count; ++l) out.e[l] = 0.0;
    return;
  }
  store_.computed_run(n.ref, offset, step, count, out.v.data(), out.e.data());
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
