// Constant folding: the nodes of a semantics expression that read no input, directly or through
// their operands, and their values, computed in float64 by the reference's own evaluation
// (kq/expr_eval.hpp). A folded value is the reference's value of that subexpression bit for bit;
// an arm that computes in another precision rounds it once, to its own type.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "kq/expr.hpp"
#include "kq/expr_eval.hpp"

namespace kq {

// Per node: its value when it depends on constants only, nullopt when it depends on an input.
// `e` must be well-formed (kq/expr_checks.hpp).
inline std::vector<std::optional<double>> fold_constants(const Expr& e) {
  const std::size_t n = e.nodes.size();
  std::vector<std::optional<double>> folded(n);
  std::vector<double> values(n);  // the folded ones, where ref::apply_node reads its operands
  for (std::size_t i = 0; i < n; ++i) {
    const ExprNode& node = e.nodes[i];
    if (node.op == Op::input) continue;
    bool constant_only = true;
    for (int k = 0; k < arity(node.op); ++k)
      constant_only = constant_only && folded[static_cast<std::size_t>(node.args[k])].has_value();
    if (!constant_only) continue;
    values[i] = node.op == Op::constant ? node.value : ref::apply_node(node, values.data());
    folded[i] = values[i];
  }
  return folded;
}

}  // namespace kq
