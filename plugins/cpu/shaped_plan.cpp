#include "shaped_plan.hpp"

#include <algorithm>
#include <string>

namespace kq::cpu {
namespace {

using ix::Node;
using ix::NodeKind;

std::string statement_text(const ix::Statement& s) {
  return "statement `" + s.text + "` (line " + std::to_string(s.line) + ")";
}

// Empty when node `i` is an index expression the evaluator computes in integers.
std::string check_subscript(const ix::Program& p, int i) {
  const Node& n = p.nodes[static_cast<std::size_t>(i)];
  switch (n.kind) {
    case NodeKind::index:
    case NodeKind::dim:
      return {};
    case NodeKind::number:
      if (n.value != static_cast<double>(static_cast<std::int64_t>(n.value)))
        return "a subscript constant " + std::to_string(n.value) + " is not an integer";
      return {};
    case NodeKind::access:
      if (!is_integer(p.decls.tensors[static_cast<std::size_t>(n.ref)].dtype))
        return "a gather through '" + p.decls.tensors[static_cast<std::size_t>(n.ref)].name +
               "', which is not an integer tensor";
      return {};  // its own subscripts are checked as those of any access
    case NodeKind::apply:
      if (n.op == Op::add || n.op == Op::sub || n.op == Op::mul || n.op == Op::neg) {
        for (int a : n.args)
          if (auto m = check_subscript(p, a); !m.empty()) return m;
        return {};
      }
      return "subscript arithmetic with " + std::string(to_string(n.op)) + " (only + - *)";
    default:
      return "a subscript that is not an index expression";
  }
}

// Empty when node `i` (of a statement assigning `target`) is something the evaluator computes.
std::string check_node(const ix::Program& p, int i, int target, const std::vector<char>& has_scan) {
  const Node& n = p.nodes[static_cast<std::size_t>(i)];
  const auto vars = static_cast<int>(p.indices.size());
  switch (n.kind) {
    case NodeKind::number:
      return {};
    case NodeKind::param:
      return n.ref >= 0 && n.ref < static_cast<int>(p.decls.params.size()) ? "" : "a bad param";
    case NodeKind::dim:
      return n.ref >= 0 && n.ref < static_cast<int>(p.decls.dims.size()) ? "" : "a bad dim";
    case NodeKind::index:
      return n.ref >= 0 && n.ref < vars ? "" : "a bad index variable";
    case NodeKind::access: {
      if (n.ref < 0 || n.ref >= static_cast<int>(p.decls.tensors.size())) return "a bad tensor";
      const ix::TensorDecl& t = p.decls.tensors[static_cast<std::size_t>(n.ref)];
      if (n.args.size() != t.shape.size())
        return "'" + t.name + "' read with " + std::to_string(n.args.size()) + " subscripts";
      // Elements of one statement are computed in parallel: reading its own target would race.
      if (n.ref == target) return "the statement reads '" + t.name + "', which it assigns";
      for (int a : n.args) {
        const Node& sub = p.nodes[static_cast<std::size_t>(a)];
        if (sub.kind == NodeKind::apply && sub.op == Op::div) {  // (e) / S, S a constant
          const Node& by = p.nodes[static_cast<std::size_t>(sub.args[1])];
          if (by.kind != NodeKind::number || by.value < 1)
            return "a subscript divided by other than a positive integer constant";
          if (auto m = check_subscript(p, sub.args[0]); !m.empty()) return m;
          continue;
        }
        if (auto m = check_subscript(p, a); !m.empty()) return m;
      }
      return {};
    }
    case NodeKind::apply:
      if (n.op == Op::constant || n.op == Op::input)
        return "an apply of " + std::string(to_string(n.op));
      if (static_cast<int>(n.args.size()) != arity(n.op))
        return std::string(to_string(n.op)) + " with " + std::to_string(n.args.size()) +
               " operands";
      return {};
    case NodeKind::reduce:
      if (n.args.size() != 1 || n.over.empty()) return "a malformed reduction";
      if (n.reduction > ix::Reduction::argmin) return "an unknown reduction";
      if (has_scan[static_cast<std::size_t>(n.args[0])]) return "a scan inside a reduction";
      for (int v : n.over)
        if (v < 0 || v >= vars) return "a reduction over a bad index variable";
      return {};
    case NodeKind::scan:
      if (n.args.size() != 1 || n.over.size() != 1) return "a malformed scan";
      if (n.scan > ix::ScanKind::cumprod) return "an unknown scan";
      if (has_scan[static_cast<std::size_t>(n.args[0])]) return "a scan inside a scan";
      return {};
  }
  return "an unknown node kind";
}

bool extent_ok(const ix::Extent& e, const ix::Program& p) {
  return e.is_dim() ? e.dim >= 0 && e.dim < static_cast<int>(p.decls.dims.size()) : e.constant >= 0;
}

}  // namespace

Status make_shaped_plan(const OpSpec& spec, ShapedPlan& out) {
  out = ShapedPlan{};
  if (!spec.program) return Status::unsupported("not a format-2 (shaped) spec");
  if (spec.compute != DType::f32 && spec.compute != DType::f64)
    return Status::unsupported("compute " + std::string(to_string(spec.compute)) +
                               ": cpu_tbb computes in float32 or float64 only");
  const ix::Program& p = *spec.program;
  out.program = spec.program;
  out.compute = spec.compute;
  out.vars = static_cast<int>(p.indices.size());
  const std::size_t tensors = p.decls.tensors.size();
  out.statement_of.assign(tensors, -1);
  out.slot.assign(tensors, -1);
  out.stored_wide.assign(tensors, 0);
  int inputs = 0, outputs = 0;
  for (std::size_t t = 0; t < tensors; ++t) {
    const ix::TensorDecl& d = p.decls.tensors[t];
    if (dtype_size(d.dtype) == 0)
      return Status::unsupported("tensor '" + d.name + "' has an unknown dtype");
    if (d.shape.size() > static_cast<std::size_t>(kMaxRank))
      return Status::unsupported("tensor '" + d.name + "' has rank " +
                                 std::to_string(d.shape.size()) + ", above " +
                                 std::to_string(kMaxRank));
    for (const ix::Extent& e : d.shape)
      if (!extent_ok(e, p)) return Status::unsupported("tensor '" + d.name + "': a bad extent");
    if (d.role == ix::Role::input) out.slot[t] = inputs++;
    if (d.role == ix::Role::output) out.slot[t] = outputs++;
  }
  for (const ix::IndexVar& v : p.indices)
    if (!extent_ok(v.extent, p))
      return Status::unsupported("index '" + v.name + "' has an unresolved extent");

  const std::size_t nodes = p.nodes.size();
  std::vector<char> has_scan(nodes, 0);
  std::vector<int> uses(nodes, 0);
  out.deps.assign(nodes * static_cast<std::size_t>(out.vars), 0);
  out.dep_list.assign(nodes, {});
  out.scan_slot.assign(nodes, -1);
  std::vector<char> read_later(tensors, 0);  // read by a statement after the one assigning it
  int first = 0;
  for (std::size_t k = 0; k < p.statements.size(); ++k) {
    const ix::Statement& s = p.statements[k];
    const std::string where = statement_text(s);
    if (s.tensor < 0 || static_cast<std::size_t>(s.tensor) >= tensors)
      return Status::unsupported(where + ": assigns no known tensor");
    const ix::TensorDecl& target = p.decls.tensors[static_cast<std::size_t>(s.tensor)];
    if (target.role == ix::Role::input || out.statement_of[static_cast<std::size_t>(s.tensor)] >= 0)
      return Status::unsupported(where + ": assigns an input or a tensor assigned before");
    if (s.lhs.size() != target.shape.size())
      return Status::unsupported(where + ": the left-hand side's rank differs from the tensor's");
    if (s.root < first || static_cast<std::size_t>(s.root) >= nodes)
      return Status::unsupported(where + ": its nodes are not in statement order");
    for (int v : s.lhs)
      if (v < 0 || v >= out.vars || std::count(s.lhs.begin(), s.lhs.end(), v) != 1)
        return Status::unsupported(where + ": a bad left-hand side index");
    out.statement_of[static_cast<std::size_t>(s.tensor)] = static_cast<int>(k);

    StatementPlan sp;
    sp.tensor = s.tensor;
    sp.first_node = first;
    sp.root = s.root;
    sp.wide = spec.compute == DType::f64 || is_integer(target.dtype);
    sp.lane_pos = s.scan_index >= 0 ? -1 : static_cast<int>(s.lhs.size()) - 1;
    for (std::size_t d = 0; d < s.lhs.size(); ++d)
      if (s.lhs[d] == s.scan_index) sp.lane_pos = static_cast<int>(d);
    if (s.scan_index >= 0 && sp.lane_pos < 0)
      return Status::unsupported(where + ": a scan along an index the left-hand side lacks");
    if (sp.lane_pos >= 0) sp.lane = s.lhs[static_cast<std::size_t>(sp.lane_pos)];
    for (int d = 0; d < static_cast<int>(s.lhs.size()); ++d)
      if (d != sp.lane_pos) sp.outer.push_back(d);
    sp.to_view = target.role == ix::Role::output;

    for (int i = first; i <= s.root; ++i) {
      const Node& n = p.nodes[static_cast<std::size_t>(i)];
      for (int a : n.args) {
        if (a < first || a >= i)
          return Status::unsupported(where + ": an operand outside the statement's nodes");
        // Each node has one buffer per thread: a node shared by two parents could be
        // overwritten in one context while the other still reads it.
        if (++uses[static_cast<std::size_t>(a)] > 1)
          return Status::unsupported(where + ": a node used twice (not a tree)");
      }
      if (auto m = check_node(p, i, s.tensor, has_scan); !m.empty())
        return Status::unsupported(where + ": " + m);
      if (n.kind == NodeKind::scan && n.over[0] != s.scan_index)
        return Status::unsupported(where + ": a scan along another index than the statement's");
      if (n.kind == NodeKind::access && n.ref != s.tensor) {
        const int by = out.statement_of[static_cast<std::size_t>(n.ref)];
        if (p.decls.tensors[static_cast<std::size_t>(n.ref)].role != ix::Role::input && by < 0)
          return Status::unsupported(where + ": reads '" +
                                     p.decls.tensors[static_cast<std::size_t>(n.ref)].name +
                                     "' before it is assigned");
        if (by >= 0) read_later[static_cast<std::size_t>(n.ref)] = 1;
      }
      // Dependencies, operands first (they precede the node).
      auto dep = [&](int node, int var) -> std::uint8_t& {
        return out.deps[static_cast<std::size_t>(node) * static_cast<std::size_t>(out.vars) +
                        static_cast<std::size_t>(var)];
      };
      has_scan[static_cast<std::size_t>(i)] = n.kind == NodeKind::scan;
      for (int a : n.args) {
        has_scan[static_cast<std::size_t>(i)] |= has_scan[static_cast<std::size_t>(a)];
        for (int v = 0; v < out.vars; ++v) dep(i, v) |= dep(a, v);
      }
      if (n.kind == NodeKind::index) dep(i, n.ref) = 1;
      if (n.kind == NodeKind::reduce)
        for (int v : n.over) dep(i, v) = 0;
      if (n.kind == NodeKind::scan) {
        dep(i, n.over[0]) = 1;
        out.scan_slot[static_cast<std::size_t>(i)] = static_cast<int>(sp.scans.size());
        sp.scans.push_back(i);
      }
      for (int v = 0; v < out.vars; ++v)
        if (dep(i, v)) out.dep_list[static_cast<std::size_t>(i)].push_back(v);
    }
    out.statements.push_back(std::move(sp));
    first = s.root + 1;
  }
  for (std::size_t t = 0; t < tensors; ++t)
    if (p.decls.tensors[t].role == ix::Role::output && out.statement_of[t] < 0)
      return Status::unsupported("output '" + p.decls.tensors[t].name + "' is never assigned");
  for (StatementPlan& sp : out.statements) {
    const ix::TensorDecl& t = p.decls.tensors[static_cast<std::size_t>(sp.tensor)];
    sp.to_storage =
        t.role == ix::Role::temporary || read_later[static_cast<std::size_t>(sp.tensor)];
    // A tensor's storage holds what its statement computes: integer tensors (positions,
    // indices) in double, exact up to 2^53.
    out.stored_wide[static_cast<std::size_t>(sp.tensor)] = sp.wide ? 1 : 0;
  }
  return Status::ok();
}

double element_cost(const ShapedPlan& plan, const StatementPlan& s,
                    const std::vector<std::int64_t>& extents) {
  const ix::Program& p = *plan.program;
  std::vector<double> cost(static_cast<std::size_t>(s.root - s.first_node + 1), 0.0);
  auto at = [&](int node) -> double& {
    return cost[static_cast<std::size_t>(node - s.first_node)];
  };
  for (int i = s.first_node; i <= s.root; ++i) {
    const Node& n = p.nodes[static_cast<std::size_t>(i)];
    double c = n.kind == NodeKind::access || n.kind == NodeKind::apply ? 1.0 : 0.0;
    for (int a : n.args) c += at(a);
    if (n.kind == NodeKind::reduce) {
      double count = 1.0;
      for (int v : n.over) count *= static_cast<double>(extents[static_cast<std::size_t>(v)]);
      c = count * (c + 1.0);
    }
    if (n.kind == NodeKind::scan) c += 1.0;
    at(i) = c;
  }
  return std::max(1.0, at(s.root));
}

}  // namespace kq::cpu
