// Semantics expressions written by hand in tests: single nodes, and a builder of post-order
// node lists. In the builder each call returns the new node's index; a node's operands are
// pushed before it whatever order a call's arguments are evaluated in.
#pragma once
#include <string>
#include <utility>

#include "kq/expr.hpp"

namespace kq::test {

inline ExprNode leaf_input(int i) {
  ExprNode n;
  n.op = Op::input;
  n.input = i;
  return n;
}

inline ExprNode leaf_constant(double v) {
  ExprNode n;
  n.op = Op::constant;
  n.value = v;
  return n;
}

// An operation on the nodes at indices a, b, c (-1: unused).
inline ExprNode node(Op op, int a, int b = -1, int c = -1) {
  ExprNode n;
  n.op = op;
  n.args[0] = a;
  n.args[1] = b;
  n.args[2] = c;
  return n;
}

struct ExprBuilder {
  Expr e;
  int push(const ExprNode& n) {
    e.nodes.push_back(n);
    return static_cast<int>(e.nodes.size()) - 1;
  }
  int in(int i) { return push(leaf_input(i)); }
  int c(double v) { return push(leaf_constant(v)); }
  int op(Op o, int a, int b = -1, int c3 = -1) { return push(node(o, a, b, c3)); }
  // The expression, with the text it stands for.
  Expr done(std::string text) {
    e.text = std::move(text);
    return e;
  }
};

}  // namespace kq::test
