// Structural matching of a spec's semantics (kq::Expr, a post-order node list) against the one
// formula an arm implements. The arm writes that formula as a pattern,
//
//   const kq::Pattern residual_relu = kq::node(kq::Op::relu, {kq::node(kq::Op::add,
//                                              {kq::in(0), kq::in(1)})});   // relu(x + residual)
//   if (!kq::matches(spec, residual_relu)) return kq::Status::unsupported("relu(x + residual)");
//
// and a spec matches when its expression tree is that tree node by node: the same ops, the same
// input positions (in(0) is spec.inputs[0], whatever it is named), constants equal exactly. It
// never looks at the text, so spacing, parentheses and input names do not matter. Nothing is
// normalised either (no commuting, no constant folding): an expression that is merely equivalent
// is a different formula, which the arm has not been qualified for.
#pragma once
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "kq/expr.hpp"
#include "kq/op_spec.hpp"

namespace kq {

struct Pattern {
  Op op = Op::constant;
  double value = 0.0;  // constant
  int input = -1;      // input position
  std::vector<Pattern> args;
};

// The spec's input at `position` (0 for its first input).
inline Pattern in(int position) {
  Pattern p;
  p.op = Op::input;
  p.input = position;
  return p;
}

// A constant, compared exactly: 0.01 is the double nearest 0.01, as the reference's.
inline Pattern cst(double v) {
  Pattern p;
  p.op = Op::constant;
  p.value = v;
  return p;
}

// An operation on its operands, as many as the op's arity (node(Op::add, {in(0), in(1)})).
inline Pattern node(Op op, std::initializer_list<Pattern> args) {
  Pattern p;
  p.op = op;
  p.args = args;
  return p;
}

namespace detail {

inline bool same_constant(double a, double b) {
  // +0 and -0 compare equal (the parser never writes -0: "-0" is neg(0)); nan is nan.
  return a == b || (std::isnan(a) && std::isnan(b));
}

inline bool match_at(const Expr& e, int idx, const Pattern& p) {
  if (idx < 0 || idx >= static_cast<int>(e.nodes.size())) return false;
  const ExprNode& n = e.nodes[idx];
  if (n.op != p.op) return false;
  if (n.op == Op::constant) return same_constant(n.value, p.value);
  if (n.op == Op::input) return n.input == p.input;
  const int k = arity(n.op);
  if (k != static_cast<int>(p.args.size())) return false;
  for (int a = 0; a < k; ++a) {
    // Operands precede their user in a well-formed list; anything else is not ours to accept.
    if (n.args[a] >= idx) return false;
    if (!match_at(e, n.args[a], p.args[a])) return false;
  }
  return true;
}

// Whether every node of the list is reachable from the root: an orphan node would be a part of
// the expression nobody looked at. Called after match_at, which checked the operand indices.
inline bool all_reachable(const Expr& e) {
  std::vector<char> seen(e.nodes.size(), 0);
  std::vector<int> stack{e.root()};
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[i]) continue;
    seen[i] = 1;
    for (int a = 0; a < arity(e.nodes[i].op); ++a) stack.push_back(e.nodes[i].args[a]);
  }
  for (char s : seen)
    if (!s) return false;
  return true;
}

// The number of inputs a pattern names: one more than its highest position.
inline int input_count(const Pattern& p) {
  int n = p.op == Op::input ? p.input + 1 : 0;
  for (const Pattern& a : p.args) n = std::max(n, input_count(a));
  return n;
}

}  // namespace detail

// True when the whole expression is exactly the pattern: the tree under the root matches, and
// every node of the list is reachable from the root.
inline bool matches(const Expr& e, const Pattern& p) {
  if (e.nodes.empty()) return false;
  return detail::match_at(e, e.root(), p) && detail::all_reachable(e);
}

// True when the spec's semantics are exactly the pattern and the spec has no input the pattern
// does not name (the arm would be handed a tensor it does not know what to do with).
inline bool matches(const OpSpec& spec, const Pattern& p) {
  return matches(spec.semantics, p) &&
         static_cast<int>(spec.inputs.size()) == detail::input_count(p);
}

}  // namespace kq
