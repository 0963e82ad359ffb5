// Whether a semantics expression (kq/expr.hpp) is well-formed: the checks that every reader of
// the node list makes before it trusts it (the host's reference, the arms that compile or lower
// the expression). An arm checks its own limits (node or input counts, ops it cannot lower) on
// top of these.
#pragma once
#include <cstddef>
#include <string>

#include "kq/expr.hpp"

namespace kq {

inline bool is_known_op(Op op) {
  return static_cast<unsigned>(op) <= static_cast<unsigned>(Op::clamp);
}

// Empty when node i of `e` is well-formed: a known op, an input index in [0, num_inputs), and
// every operand (the op's arity of them) an earlier node. Otherwise what is wrong, naming node i.
inline std::string node_problem(const Expr& e, std::size_t i, std::size_t num_inputs) {
  const ExprNode& n = e.nodes[i];
  const std::string node = "node " + std::to_string(i);
  if (!is_known_op(n.op)) return node + ": unknown op " + std::to_string(static_cast<int>(n.op));
  if (n.op == Op::input && (n.input < 0 || static_cast<std::size_t>(n.input) >= num_inputs))
    return node + ": input index " + std::to_string(n.input) + " out of range for " +
           std::to_string(num_inputs) + " input(s)";
  for (int k = 0; k < arity(n.op); ++k)
    if (n.args[k] < 0 || static_cast<std::size_t>(n.args[k]) >= i)
      return node + " (" + std::string(to_string(n.op)) + "): operand " + std::to_string(k) +
             " (node " + std::to_string(n.args[k]) + ") is not an earlier node";
  return {};
}

// Empty when `e` is a well-formed post-order node list over `num_inputs` inputs: at least one
// node, and every node well-formed (node_problem). Otherwise the first problem found, e.g.
// "empty expression" or "node 2 (add): operand 1 (node 5) is not an earlier node".
inline std::string expr_problem(const Expr& e, std::size_t num_inputs) {
  if (e.nodes.empty()) return "empty expression";
  for (std::size_t i = 0; i < e.nodes.size(); ++i)
    if (std::string why = node_problem(e, i, num_inputs); !why.empty()) return why;
  return {};
}

}  // namespace kq
