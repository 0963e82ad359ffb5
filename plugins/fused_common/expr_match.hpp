// A small structural matcher for spec semantics (kq::Expr, a post-order node list). An arm that
// implements one fixed formula recognises a spec by comparing its expression tree node by node
// with a pattern: same ops, the same input positions, constants equal exactly. Nothing is
// normalised (no commuting, no constant folding): an expression that is merely equivalent is
// not this arm's business.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "kq/expr.hpp"

namespace kq::fused {

struct Pattern {
  Op op = Op::constant;
  double value = 0.0;  // constant
  int input = -1;      // input position
  std::vector<Pattern> args;
};

inline Pattern in(int position) {
  Pattern p;
  p.op = Op::input;
  p.input = position;
  return p;
}

inline Pattern cst(double v) {
  Pattern p;
  p.op = Op::constant;
  p.value = v;
  return p;
}

inline Pattern node(Op op, std::initializer_list<Pattern> args) {
  Pattern p;
  p.op = op;
  p.args = args;
  return p;
}

namespace detail {
inline bool match_at(const Expr& e, int idx, const Pattern& p) {
  if (idx < 0 || idx >= static_cast<int>(e.nodes.size())) return false;
  const ExprNode& n = e.nodes[idx];
  if (n.op != p.op) return false;
  switch (n.op) {
    case Op::constant:
      // Exact: 0.01 must be the double nearest 0.01, as the reference multiplies by it.
      // (+0 and -0 compare equal; no pattern here depends on the sign of a zero constant.)
      return n.value == p.value;
    case Op::input:
      return n.input == p.input;
    default:
      break;
  }
  const int k = arity(n.op);
  if (k != static_cast<int>(p.args.size())) return false;
  for (int a = 0; a < k; ++a) {
    // Operands precede their user in a well-formed list; anything else is not ours to accept.
    if (n.args[a] >= idx) return false;
    if (!match_at(e, n.args[a], p.args[a])) return false;
  }
  return true;
}
}  // namespace detail

// True when the whole expression is exactly the pattern: the tree under the root matches, and
// every node of the list is reachable from the root (an orphan node would be a part of the
// expression nobody looked at).
inline bool matches(const Expr& e, const Pattern& p) {
  if (e.nodes.empty()) return false;
  if (!detail::match_at(e, e.root(), p)) return false;
  std::vector<char> seen(e.nodes.size(), 0);
  std::vector<int> stack{e.root()};
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (seen[i]) continue;
    seen[i] = 1;
    for (int a = 0; a < arity(e.nodes[i].op); ++a) stack.push_back(e.nodes[i].args[a]);
  }
  for (char s : seen)
    if (!s) return false;
  return true;
}

}  // namespace kq::fused
