// The float64 reference for one element: the expression's nodes evaluated in post-order, each
// op as kq/semantics.hpp defines it and each node's value kept as a double. The host's reference
// (eval_scalar in core/expr/reference.hpp) is this function, and the arms fold constants
// (kq/expr_fold.hpp) and spot-check results with it, so all of them agree bit for bit.
#pragma once
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "kq/expr.hpp"
#include "kq/semantics.hpp"

namespace kq::ref {

// An operation node's value: v[k] holds node k's value for each operand k that `n` reads (the
// first arity(n.op) of its args; the others are not looked at). NaN for a leaf.
inline double apply_node(const ExprNode& n, const double* v) {
  double r = std::numeric_limits<double>::quiet_NaN();
  visit_op(n.op, [&]<Op o>() {
    constexpr int k = arity(o);
    if constexpr (k == 1)
      r = apply<o>(v[n.args[0]], 0.0, 0.0);
    else if constexpr (k == 2)
      r = apply<o>(v[n.args[0]], v[n.args[1]], 0.0);
    else
      r = apply<o>(v[n.args[0]], v[n.args[1]], v[n.args[2]]);
  });
  return r;
}

// Writes node i's value to v[i] for every node (v has e.nodes.size() slots) and returns the
// root's. `e` must be non-empty and well-formed (kq/expr_checks.hpp); `inputs[k]` is the value
// of input k, for every input index the expression reads.
inline double eval_nodes(const Expr& e, std::span<const double> inputs, double* v) {
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    const ExprNode& n = e.nodes[i];
    if (n.op == Op::constant)
      v[i] = n.value;
    else if (n.op == Op::input)
      v[i] = inputs[static_cast<std::size_t>(n.input)];
    else
      v[i] = apply_node(n, v);
  }
  return v[e.nodes.size() - 1];
}

// The expression's value for one element, as eval_nodes; an empty expression gives NaN.
// Allocates nothing for expressions of up to 64 nodes.
inline double eval_expr(const Expr& e, std::span<const double> inputs) {
  constexpr std::size_t kInlineNodes = 64;
  if (e.nodes.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (e.nodes.size() <= kInlineNodes) {
    double v[kInlineNodes];
    return eval_nodes(e, inputs, v);
  }
  std::vector<double> v(e.nodes.size());
  return eval_nodes(e, inputs, v.data());
}

}  // namespace kq::ref
