#include "indexed/machine.hpp"

#include <cmath>
#include <limits>

#include "indexed/accumulate.hpp"
#include "kq/semantics.hpp"

namespace kq::ix {
namespace {

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

double Machine::element(Frame& f) {
  const Statement& s = p_.statements[static_cast<std::size_t>(f.statement)];
  return eval(s.root, f);
}

void Machine::line(Frame& f, std::vector<double>& out) {
  const Statement& s = p_.statements[static_cast<std::size_t>(f.statement)];
  const auto var = static_cast<std::size_t>(s.scan_index);
  ScanLines lines;
  for (int i = in_.first_node[static_cast<std::size_t>(f.statement)]; i <= s.root; ++i) {
    const Node& n = p_.nodes[static_cast<std::size_t>(i)];
    if (n.kind != NodeKind::scan) continue;
    std::vector<double> values(static_cast<std::size_t>(in_.extents[var]));
    walk_scan(n, f, [&](std::int64_t pos, double v) {
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

double Machine::eval(int node, Frame& f) {
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  switch (n.kind) {
    case NodeKind::number:
      return n.value;
    case NodeKind::param:
      return p_.decls.params[static_cast<std::size_t>(n.ref)].value;
    case NodeKind::dim:
      return static_cast<double>(in_.dims[static_cast<std::size_t>(n.ref)]);
    case NodeKind::index:
      return static_cast<double>(f.idx[static_cast<std::size_t>(n.ref)]);
    case NodeKind::access:
      return read(n, f);
    case NodeKind::apply: {
      double a[3] = {0.0, 0.0, 0.0};
      for (std::size_t k = 0; k < n.args.size(); ++k) a[k] = eval(n.args[k], f);
      return ref::apply(n.op, a[0], a[1], a[2]);
    }
    case NodeKind::reduce:
      return reduce(n, f);
    case NodeKind::scan:
      return scan_at(n, f);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Index arithmetic in integers, so that offsets beyond 2^53 stay exact.
std::int64_t Machine::subscript(int node, Frame& f) {
  const Node& n = p_.nodes[static_cast<std::size_t>(node)];
  switch (n.kind) {
    case NodeKind::index:
      return f.idx[static_cast<std::size_t>(n.ref)];
    case NodeKind::dim:
      return in_.dims[static_cast<std::size_t>(n.ref)];
    case NodeKind::number:
      return static_cast<std::int64_t>(n.value);
    case NodeKind::access: {
      const double v = read(n, f);
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

double Machine::read(const Node& n, Frame& f) {
  const auto t = static_cast<std::size_t>(n.ref);
  const std::vector<std::int64_t>& shape = in_.shapes[t];
  std::int64_t linear = 0;
  for (std::size_t d = 0; d < n.args.size(); ++d) {
    const std::int64_t i = subscript(n.args[d], f);
    if (i < 0 || i >= shape[d]) {
      const Node& sub = p_.nodes[static_cast<std::size_t>(n.args[d])];
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
  if (const Buffer* b = in_.inputs[t]) return b->get(linear);
  return store_.computed(n.ref, linear);
}

// Runs over the reduced indices in row-major order, the first listed outermost.
double Machine::reduce(const Node& n, Frame& f) {
  std::int64_t count = 1;
  for (int v : n.over) count *= in_.extents[static_cast<std::size_t>(v)];
  const bool arg = n.reduction == Reduction::argmax || n.reduction == Reduction::argmin;
  if (arg && count == 0)
    throw EvalError(where(f) + ": " + std::string(reduction_name(n.reduction)) +
                    " over an empty range");
  Accumulator acc(accumulation_of(n.reduction));
  double best = 0.0;
  std::int64_t best_at = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t rest = k;
    for (std::size_t j = n.over.size(); j-- > 0;) {
      const auto v = static_cast<std::size_t>(n.over[j]);
      f.idx[v] = rest % in_.extents[v];
      rest /= in_.extents[v];
    }
    const double x = eval(n.args[0], f);
    if (!arg) {
      acc.add(x);
      continue;
    }
    // The first extreme wins: only a strictly better value moves it; the first NaN ends it.
    const bool better =
        k == 0 || std::isnan(x) || (n.reduction == Reduction::argmax ? x > best : x < best);
    if (better) {
      best = x;
      best_at = k;
    }
    if (std::isnan(x)) break;
  }
  return arg ? static_cast<double>(best_at) : acc.value();
}

// Visits (position, value) along the scan index in the order of the scan, until visit returns
// false; the scan index's slot is restored afterwards.
template <typename Visit>
void Machine::walk_scan(const Node& n, Frame& f, Visit&& visit) {
  const auto var = static_cast<std::size_t>(n.over[0]);
  const std::int64_t extent = in_.extents[var];
  const std::int64_t saved = f.idx[var];
  Accumulator acc(n.scan == ScanKind::cumsum ? Accumulation::sum : Accumulation::prod);
  for (std::int64_t step = 0; step < extent; ++step) {
    const std::int64_t pos = n.reverse ? extent - 1 - step : step;
    const double before = acc.value();
    f.idx[var] = pos;
    acc.add(eval(n.args[0], f));
    if (!visit(pos, n.exclusive ? before : acc.value())) break;
  }
  f.idx[var] = saved;
}

double Machine::scan_at(const Node& n, Frame& f) {
  const int self = static_cast<int>(&n - p_.nodes.data());
  const auto var = static_cast<std::size_t>(n.over[0]);
  if (f.lines != nullptr)
    for (const auto& [node, values] : *f.lines)
      if (node == self) return values[static_cast<std::size_t>(f.idx[var])];
  const std::int64_t target = f.idx[var];
  double result = 0.0;
  walk_scan(n, f, [&](std::int64_t pos, double v) {
    result = v;
    return pos != target;
  });
  return result;
}

}  // namespace kq::ix
