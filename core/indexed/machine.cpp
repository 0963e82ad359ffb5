#include "indexed/machine.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kq/semantics.hpp"

namespace kq::ix {

Accumulation accumulation_of(Reduction r) {
  switch (r) {
    case Reduction::prod:
      return Accumulation::prod;
    case Reduction::max:
      return Accumulation::max;
    case Reduction::min:
      return Accumulation::min;
    default:
      return Accumulation::sum;
  }
}

bool is_arg(Reduction r) { return r == Reduction::argmax || r == Reduction::argmin; }

namespace {

std::string_view reduction_name(Reduction r) {
  return r == Reduction::argmax ? "argmax" : "argmin";
}

}  // namespace

std::string Machine::where(const Frame& f) const {
  const Statement& s = p_.statements[static_cast<std::size_t>(f.statement)];
  std::string text = "line " + std::to_string(s.line) + " `" + s.text + "`";
  for (std::size_t d = 0; d < s.lhs.size(); ++d) {
    const auto v = static_cast<std::size_t>(s.lhs[d]);
    text += (d ? ", " : " at ") + p_.indices[v].name + " = " + std::to_string(f.idx[v]);
  }
  return text;
}

Term Machine::element(Frame& f) {
  const Statement& s = p_.statements[static_cast<std::size_t>(f.statement)];
  return eval(s.root, f);
}

void Machine::line(Frame& f, std::vector<Term>& out) {
  const Statement& s = p_.statements[static_cast<std::size_t>(f.statement)];
  const auto var = static_cast<std::size_t>(s.scan_index);
  ScanLines lines;
  for (int i = in_.first_node[static_cast<std::size_t>(f.statement)]; i <= s.root; ++i) {
    const Node& n = p_.nodes[static_cast<std::size_t>(i)];
    if (n.kind != NodeKind::scan) continue;
    std::vector<Term> values(static_cast<std::size_t>(in_.extents[var]));
    walk_scan(n, f, [&](std::int64_t pos, const Term& v) {
      values[static_cast<std::size_t>(pos)] = v;
      return true;
    });
    lines.emplace_back(i, std::move(values));
  }
  f.lines = &lines;
  out.resize(static_cast<std::size_t>(in_.extents[var]));
  for (std::int64_t k = 0; k < in_.extents[var]; ++k) {
    f.idx[var] = k;
    out[static_cast<std::size_t>(k)] = eval(s.root, f);
  }
  f.lines = nullptr;
}

// Numbers, params, dims and indices are exact: their bound is 0.
Term Machine::eval_given(int node, Frame& f, int given, const Term& value) {
  given_ = given;
  given_value_ = value;
  const Term t = eval(node, f);
  given_ = -1;
  return t;
}

Term Machine::eval(int node, Frame& f) {
  if (node == given_) return given_value_;
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  switch (n.kind) {
    case NodeKind::number:
      return {n.value};
    case NodeKind::param:
      return {p_.decls.params[static_cast<std::size_t>(n.ref)].value};
    case NodeKind::dim:
      return {static_cast<double>(in_.dims[static_cast<std::size_t>(n.ref)])};
    case NodeKind::index:
      return {static_cast<double>(f.idx[static_cast<std::size_t>(n.ref)])};
    case NodeKind::access:
      return read(n, f);
    case NodeKind::apply: {
      Term a[3];
      for (std::size_t k = 0; k < n.args.size(); ++k) a[k] = eval(n.args[k], f);
      const double v = ref::apply(n.op, a[0].v, a[1].v, a[2].v);
      return {v, bounds_ ? apply_bound(n.op, a, v) : 0.0};
    }
    case NodeKind::reduce:
      return reduce(n, f);
    case NodeKind::scan:
      return scan_at(n, f);
  }
  return {std::numeric_limits<double>::quiet_NaN()};
}

// Index arithmetic in integers, so that offsets beyond 2^53 stay exact.
std::int64_t Machine::subscript(int node, Frame& f) {
  if (static_cast<std::size_t>(node) < in_.affine.size()) {
    if (const AffineIndex& a = in_.affine[static_cast<std::size_t>(node)]; a.ok) {
      std::int64_t i = a.c;
      for (int k = 0; k < a.n; ++k)
        i += a.coef[static_cast<std::size_t>(k)] *
             f.idx[static_cast<std::size_t>(a.var[static_cast<std::size_t>(k)])];
      return i;
    }
  }
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  switch (n.kind) {
    case NodeKind::index:
      return f.idx[static_cast<std::size_t>(n.ref)];
    case NodeKind::dim:
      return in_.dims[static_cast<std::size_t>(n.ref)];
    case NodeKind::number:
      return static_cast<std::int64_t>(n.value);
    case NodeKind::access: {
      const double v = read(n, f).v;
      if (!representable(DType::i64, v))
        throw EvalError(where(f) + ": gather through '" +
                        p_.decls.tensors[static_cast<std::size_t>(n.ref)].name + "' read " +
                        std::to_string(v) + ", which is not an integer");
      return static_cast<std::int64_t>(v);
    }
    case NodeKind::apply:
      switch (n.op) {
        case Op::add:
          return subscript(n.args[0], f) + subscript(n.args[1], f);
        case Op::sub:
          return subscript(n.args[0], f) - subscript(n.args[1], f);
        case Op::mul:
          return subscript(n.args[0], f) * subscript(n.args[1], f);
        case Op::neg:
          return -subscript(n.args[0], f);
        default:
          break;
      }
      break;
    default:
      break;
  }
  throw EvalError(where(f) + ": a subscript is not an index expression");
}

// Inputs are exact (bound 0), their pad too; a computed tensor's element brings its bound.
Term Machine::read(const Node& n, Frame& f) {
  const auto t = static_cast<std::size_t>(n.ref);
  const std::vector<std::int64_t>& shape = in_.shapes[t];
  const std::optional<double>& pad = p_.decls.tensors[t].pad;
  std::int64_t linear = 0;
  for (std::size_t d = 0; d < n.args.size(); ++d) {
    const Node& sub = p_.nodes[static_cast<std::size_t>(n.args[d])];
    std::int64_t i = 0;
    if (sub.kind == NodeKind::apply && sub.op == Op::div) {  // (e) / S: a position where exact
      const std::int64_t e = subscript(sub.args[0], f);
      const auto by =
          static_cast<std::int64_t>(p_.nodes[static_cast<std::size_t>(sub.args[1])].value);
      if (e % by != 0) {
        if (pad) return {*pad};
        throw EvalError(where(f) + ": subscript " + std::to_string(d + 1) + " of '" +
                        p_.decls.tensors[t].name + "' is " + std::to_string(e) + " / " +
                        std::to_string(by) + ", not a position (the division is not exact)");
      }
      i = e / by;
    } else {
      i = subscript(n.args[d], f);
    }
    if (i < 0 || i >= shape[d]) {
      if (pad) return {*pad};
      const std::string through =
          sub.kind == NodeKind::access
              ? " (a gather through '" + p_.decls.tensors[static_cast<std::size_t>(sub.ref)].name +
                    "')"
              : "";
      throw EvalError(where(f) + ": subscript " + std::to_string(d + 1) + " of '" +
                      p_.decls.tensors[t].name + "' is " + std::to_string(i) + through +
                      ", outside [0, " + std::to_string(shape[d]) + ")");
    }
    linear += i * in_.strides[t][d];
  }
  if (const Buffer* b = in_.inputs[t]) return {b->get(linear)};
  return store_.computed(n.ref, linear);
}

// Runs over the reduced indices in row-major order, the first listed outermost; a long one in
// chunks (kReduceChunk), combined in order. The bound: the sum and product rules (bound.hpp); a
// max or min's is the chosen term's (the largest of equal ones); an argmax's is 0, its output an
// integer.
Term Machine::reduce(const Node& n, Frame& f) {
  const std::int64_t count = term_count(n);
  if (is_arg(n.reduction) && count == 0)
    throw EvalError(where(f) + ": " + std::string(reduction_name(n.reduction)) +
                    " over an empty range");
  if (count <= kReduceChunk) {
    const Part p = reduce_range(n, f, 0, count, {});
    return combine(n, {&p, 1});
  }
  std::vector<Part> parts = reduce_chunks(n, f, count, {});
  if (bounds_ && n.reduction == Reduction::sum) {
    // The bound's running sums are the whole sum's: each chunk again, from the plain sum of the
    // chunks before it.
    std::vector<SumBound> starts;
    double prefix = 0.0;
    for (std::size_t c = 0; c < parts.size(); ++c) {
      starts.push_back(SumBound::after(prefix, static_cast<std::int64_t>(c) * kReduceChunk));
      prefix += parts[c].sum_bound.running();
    }
    parts = reduce_chunks(n, f, count, starts);
  }
  return combine(n, parts);
}

std::vector<Machine::Part> Machine::reduce_chunks(const Node& n, Frame& f, std::int64_t count,
                                                  const std::vector<SumBound>& sum_starts) {
  const std::int64_t chunks = (count + kReduceChunk - 1) / kReduceChunk;
  std::vector<Part> parts(static_cast<std::size_t>(chunks), Part(accumulation_of(n.reduction)));
  const auto run = [&](Machine& m, Frame& frame, std::int64_t c) {
    const auto k = static_cast<std::size_t>(c);
    parts[k] = m.reduce_range(n, frame, c * kReduceChunk, std::min(count, (c + 1) * kReduceChunk),
                              sum_starts.empty() ? SumBound{} : sum_starts[k]);
  };
  // Side by side, each task with its own machine, frame and (where the store remembers what it
  // computed) fork of the store; the first chunk's error in the walk's order is the one
  // reported, whichever thread met its error first.
  std::vector<std::string> errors(static_cast<std::size_t>(chunks));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks, 1),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      const std::unique_ptr<Store> own = store_.fork();
                      Machine m(in_, own ? *own : store_, bounds_);
                      m.given_ = given_;
                      m.given_value_ = given_value_;
                      Frame frame = f;
                      for (std::int64_t c = r.begin(); c < r.end(); ++c) {
                        try {
                          run(m, frame, c);
                        } catch (const EvalError& e) {
                          errors[static_cast<std::size_t>(c)] = e.what();
                          return;
                        }
                      }
                    });
  for (const std::string& e : errors)
    if (!e.empty()) throw EvalError(e);
  return parts;
}

Machine::Part Machine::reduce_range(const Node& n, Frame& f, std::int64_t begin, std::int64_t end,
                                    const SumBound& sum_start) {
  const bool arg = is_arg(n.reduction);
  Part p(accumulation_of(n.reduction), sum_start);
  // Term k added to p; false where it ends the walk (an argmax's NaN).
  const auto take = [&](std::int64_t k, const Term& t) {
    const double x = t.v;
    if (!arg) {
      add_term(n.reduction, p, t);
      return true;
    }
    // The first extreme wins: only a strictly better value moves it; the first NaN ends it.
    const bool better =
        k == begin || std::isnan(x) || (n.reduction == Reduction::argmax ? x > p.best : x < p.best);
    if (better) {
      p.best = x;
      p.best_at = k;
    }
    return !std::isnan(x);
  };
  // The terms in order, a run along the innermost reduced index at a time where their values
  // can be walked together (element_lanes' bits); a run in error, one at a time, so that the
  // error is the first term's that meets one (and none past an argmax's NaN).
  const int inner = reference_lanes() && !n.over.empty() ? n.over.back() : -1;
  for (std::int64_t k = begin; k < end;) {
    enter_term(n, f, k);
    int count = 1;
    if (inner >= 0) {
      const auto v = static_cast<std::size_t>(inner);
      count =
          static_cast<int>(std::min({std::int64_t{kLanes}, end - k, in_.extents[v] - f.idx[v]}));
    }
    const LaneTerms* run = nullptr;
    if (count > 1) try {
        const Restore<std::int64_t> keep(index_of(f, inner));
        run = &lanes(n.args[0], f, inner, count, lanes_floor_);
      } catch (const EvalError&) {
        run = nullptr;
      }
    if (!run) {
      if (!take(k, eval(n.args[0], f))) break;
      ++k;
      continue;
    }
    bool more = true;
    for (int l = 0; l < count && more; ++l) more = take(k + l, {run->v[l], run->e[l]});
    if (!more) break;
    k += count;
  }
  return p;
}

std::int64_t Machine::term_count(const Node& n) const {
  std::int64_t count = 1;
  for (int v : n.over) count *= in_.extents[static_cast<std::size_t>(v)];
  return count;
}

void Machine::enter_term(const Node& n, Frame& f, std::int64_t k) const {
  for (std::size_t j = n.over.size(); j-- > 0;) {
    const auto v = static_cast<std::size_t>(n.over[j]);
    f.idx[v] = k % in_.extents[v];
    k /= in_.extents[v];
  }
}

void Machine::add_term(Reduction r, Part& p, const Term& t) const {
  if (!bounds_) return p.acc.add(t.v);
  const double before = p.acc.value();
  p.acc.add(t.v);
  switch (r) {
    case Reduction::sum:
      p.sum_bound.add(t);
      break;
    case Reduction::prod:
      p.prod_bound.add(t);
      break;
    default:  // max, min: did this term come out, or tie with the one that had?
      if (const double after = p.acc.value(); after != before)
        p.extreme_bound = t.e;
      else if (t.v == after)
        p.extreme_bound = std::max(p.extreme_bound, t.e);
  }
}

// The chunks in order, by the rules of their terms: a chunk's result is added like a term.
Term Machine::combine(const Node& n, std::span<const Part> parts) const {
  if (parts.size() == 1) {
    const Part& p = parts.front();
    if (is_arg(n.reduction)) return {static_cast<double>(p.best_at)};
    if (!bounds_) return {p.acc.value()};
    const double e = n.reduction == Reduction::sum    ? p.sum_bound.value()
                     : n.reduction == Reduction::prod ? p.prod_bound.value()
                                                      : p.extreme_bound;
    return {p.acc.value(), e};
  }
  if (is_arg(n.reduction)) {
    const Part* chosen = &parts.front();
    for (const Part& p : parts) {
      if (std::isnan(chosen->best)) break;
      if (std::isnan(p.best) ||
          (n.reduction == Reduction::argmax ? p.best > chosen->best : p.best < chosen->best))
        chosen = &p;
    }
    return {static_cast<double>(chosen->best_at)};
  }
  Part whole(accumulation_of(n.reduction));
  for (const Part& p : parts) {
    const double before = whole.acc.value();
    whole.acc.add(p.acc.value());
    whole.sum_bound.append(p.sum_bound);
    whole.prod_bound.append(p.prod_bound);
    if (const double after = whole.acc.value(); after != before)
      whole.extreme_bound = p.extreme_bound;
    else if (p.acc.value() == after)
      whole.extreme_bound = std::max(whole.extreme_bound, p.extreme_bound);
  }
  return combine(n, {&whole, 1});
}

// Visits (position, value) along the scan index in the order of the scan, until visit returns
// false; the scan index's slot is restored afterwards. Each position's bound is the sum's or the
// product's over the terms its value holds (none before the first of an exclusive scan).
template <typename Visit>
void Machine::walk_scan(const Node& n, Frame& f, Visit&& visit) {
  const auto var = static_cast<std::size_t>(n.over[0]);
  const std::int64_t extent = in_.extents[var];
  const std::int64_t saved = f.idx[var];
  const bool sum = n.scan == ScanKind::cumsum;
  Accumulator acc(sum ? Accumulation::sum : Accumulation::prod);
  SumBound sum_bound;
  ProdBound prod_bound;
  const auto bound = [&] {
    if (!bounds_) return 0.0;
    return sum ? sum_bound.value() : prod_bound.value();
  };
  for (std::int64_t step = 0; step < extent; ++step) {
    const std::int64_t pos = n.reverse ? extent - 1 - step : step;
    const Term before{acc.value(), bound()};
    f.idx[var] = pos;
    const Term t = eval(n.args[0], f);
    acc.add(t.v);
    if (bounds_ && sum) sum_bound.add(t);
    if (bounds_ && !sum) prod_bound.add(t);
    if (!visit(pos, n.exclusive ? before : Term{acc.value(), bound()})) break;
  }
  f.idx[var] = saved;
}

Term Machine::scan_at(const Node& n, Frame& f) {
  const int self = static_cast<int>(&n - p_.nodes.data());
  const auto var = static_cast<std::size_t>(n.over[0]);
  if (f.lines != nullptr)
    for (const auto& [node, values] : *f.lines)
      if (node == self) return values[static_cast<std::size_t>(f.idx[var])];
  const std::int64_t target = f.idx[var];
  Term result;
  walk_scan(n, f, [&](std::int64_t pos, const Term& v) {
    result = v;
    return pos != target;
  });
  return result;
}

}  // namespace kq::ix
