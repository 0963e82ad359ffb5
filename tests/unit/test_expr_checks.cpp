// The expression checks every reader of the node list shares (plugin-api/include/kq/
// expr_checks.hpp): what is well-formed, and the reason given, naming the node, for what is not;
// and which nodes the root depends on (kq/expr_live.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "expr/parser.hpp"
#include "expr_nodes.hpp"
#include "kq/expr_checks.hpp"
#include "kq/expr_live.hpp"

namespace {

using kq::Expr;
using kq::Op;
using kq::test::ExprBuilder;

Expr relu_add() {
  ExprBuilder b;
  const int x = b.in(0);
  const int y = b.in(1);
  b.op(Op::relu, b.op(Op::add, x, y));
  return b.done("relu(x + y)");
}

}  // namespace

TEST_CASE("expr_problem: a well-formed expression has no problem") {
  CHECK(kq::expr_problem(relu_add(), 2) == "");
  CHECK(kq::expr_problem(relu_add(), 3) == "");  // an input the expression does not read is fine
  ExprBuilder constant;
  constant.c(1.5);
  CHECK(kq::expr_problem(constant.e, 0) == "");
  const std::vector<std::string> names{"x", "y", "z"};
  for (const char* text : {"relu(x + y)", "2.5 * x - 0.75 * y", "clamp(x, -1, 1)", "gelu(x)",
                           "select(x > 0, x, 0.01 * x)", "silu(x) * y", "select(x, y, z) != nan"}) {
    INFO(text);
    const kq::ExprParseResult r = kq::parse_expr(text, names);
    REQUIRE(r.expr.has_value());
    CHECK(kq::expr_problem(*r.expr, names.size()) == "");
  }
}

TEST_CASE("expr_problem: each malformed node is named with what is wrong") {
  CHECK(kq::expr_problem(Expr{}, 1) == "empty expression");

  Expr unknown = relu_add();
  unknown.nodes[3].op = static_cast<Op>(200);
  CHECK(kq::expr_problem(unknown, 2) == "node 3: unknown op 200");

  Expr beyond = relu_add();
  beyond.nodes[1].input = 2;
  CHECK(kq::expr_problem(beyond, 2) == "node 1: input index 2 out of range for 2 input(s)");
  Expr negative = relu_add();
  negative.nodes[0].input = -1;
  CHECK(kq::expr_problem(negative, 2) == "node 0: input index -1 out of range for 2 input(s)");
  CHECK(kq::expr_problem(relu_add(), 0) == "node 0: input index 0 out of range for 0 input(s)");

  Expr forward = relu_add();
  forward.nodes[2].args[1] = 3;
  CHECK(kq::expr_problem(forward, 2) == "node 2 (add): operand 1 (node 3) is not an earlier node");
  Expr itself = relu_add();
  itself.nodes[3].args[0] = 3;
  CHECK(kq::expr_problem(itself, 2) == "node 3 (relu): operand 0 (node 3) is not an earlier node");
  Expr missing = relu_add();
  missing.nodes[2].args[0] = -1;
  CHECK(kq::expr_problem(missing, 2) == "node 2 (add): operand 0 (node -1) is not an earlier node");
}

TEST_CASE("expr_problem: the op's arity decides which operands are read") {
  // A unary op's second and third operands are never read, so they are not checked...
  Expr unary = relu_add();
  unary.nodes[3].args[1] = 99;
  CHECK(kq::expr_problem(unary, 2) == "");
  // ...and a ternary op's third is.
  ExprBuilder b;
  const int x = b.in(0);
  b.op(Op::clamp, x, x, 5);
  CHECK(kq::expr_problem(b.e, 1) == "node 1 (clamp): operand 2 (node 5) is not an earlier node");
}

TEST_CASE("expr_problem: the first problem in node order is the one reported") {
  Expr e = relu_add();
  e.nodes[1].input = 7;
  e.nodes[3].op = static_cast<Op>(99);
  e.nodes[3].args[0] = 3;
  CHECK(kq::expr_problem(e, 2) == "node 1: input index 7 out of range for 2 input(s)");
  // Within one node the op comes first, then its input index, then its operands.
  CHECK(kq::node_problem(e, 3, 2) == "node 3: unknown op 99");
}

TEST_CASE("is_known_op: every op up to clamp") {
  for (int o = 0; o <= static_cast<int>(Op::clamp); ++o) CHECK(kq::is_known_op(static_cast<Op>(o)));
  CHECK_FALSE(kq::is_known_op(static_cast<Op>(static_cast<int>(Op::clamp) + 1)));
  CHECK_FALSE(kq::is_known_op(static_cast<Op>(255)));
}

TEST_CASE("live_nodes: the root and what it reads, not the dead nodes") {
  ExprBuilder b;
  const int x = b.in(0);
  b.op(Op::exp, x);  // dead
  const int y = b.in(1);
  const int dead_constant = b.c(3.0);
  b.op(Op::neg, dead_constant);  // dead
  b.op(Op::add, x, y);           // the root
  CHECK(kq::live_nodes(b.e) == std::vector<bool>{true, false, true, false, false, true});
  CHECK(kq::live_nodes(Expr{}).empty());
}
