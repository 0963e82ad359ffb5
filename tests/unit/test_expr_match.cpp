// The structural matcher of the plugin API (plugin-api/include/kq/expr_match.hpp): a spec is
// recognised by its expression tree as the host parses it, never by its text or op name. Every
// shipped spec is recognised by exactly the patterns of its formula; spacing and input names do
// not matter, input positions and constants do, and a list with a node outside the tree or an
// input the pattern does not name is refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "expr/parser.hpp"
#include "kq/expr_match.hpp"
#include "spec/spec.hpp"
#include "test_support.hpp"

namespace {

using kq::cst;
using kq::in;
using kq::node;
using kq::Op;

kq::Expr parsed(const std::string& text, const std::vector<std::string>& inputs) {
  auto r = kq::parse_expr(text, inputs);
  REQUIRE_MESSAGE(r.expr.has_value(), text);
  return *r.expr;
}

kq::OpSpec spec_of(const std::string& text, const std::vector<std::string>& inputs) {
  kq::OpSpec s;
  s.inputs = inputs;
  s.semantics = parsed(text, inputs);
  return s;
}

const kq::Pattern residual_relu = node(Op::relu, {node(Op::add, {in(0), in(1)})});
const kq::Pattern silu_mul = node(Op::mul, {node(Op::silu, {in(0)}), in(1)});
const kq::Pattern leaky_relu =
    node(Op::select, {node(Op::gt, {in(0), cst(0.0)}), in(0), node(Op::mul, {cst(0.01), in(0)})});

}  // namespace

TEST_CASE("every shipped spec matches the pattern of its formula and no other") {
  const std::map<std::string, const kq::Pattern*> patterns = {
      {"relu(x + residual)", &residual_relu},
      {"silu(x) * y", &silu_mul},
      {"select(x > 0, x, 0.01 * x)", &leaky_relu}};
  int recognised = 0;
  for (const auto& e : std::filesystem::directory_iterator(kq::test::source_dir() / "specs")) {
    if (e.path().extension() != ".yaml") continue;
    const kq::Spec spec = kq::load_spec(e.path());
    const auto it = patterns.find(spec.op.semantics.text);
    CAPTURE(e.path().filename().string());
    for (const auto& [formula, pattern] : patterns)
      CHECK(kq::matches(spec.op, *pattern) == (it != patterns.end() && pattern == it->second));
    recognised += it != patterns.end();
  }
  CHECK(recognised >= 6);  // residual_relu in four forms, silu_mul in two, leaky_relu
}

TEST_CASE("spacing, parentheses and input names do not matter; positions and constants do") {
  CHECK(kq::matches(spec_of("relu( a+b )", {"a", "b"}), residual_relu));
  CHECK(kq::matches(spec_of("relu(((x) + (r)))", {"x", "r"}), residual_relu));
  CHECK_FALSE(kq::matches(spec_of("relu(r + x)", {"x", "r"}), residual_relu));  // no commuting
  CHECK_FALSE(kq::matches(spec_of("relu(x + x)", {"x"}), residual_relu));
  CHECK_FALSE(kq::matches(spec_of("max(x + r, 0)", {"x", "r"}), residual_relu));

  CHECK(kq::matches(spec_of("select(x > 0, x, 0.01 * x)", {"x"}), leaky_relu));
  CHECK_FALSE(kq::matches(spec_of("select(x > 0, x, 0.02 * x)", {"x"}), leaky_relu));
  CHECK_FALSE(kq::matches(spec_of("select(x > 0, x, x * 0.01)", {"x"}), leaky_relu));
  // "-1" is neg(1), never the constant -1.
  CHECK(kq::matches(spec_of("clamp(x, -1, 1)", {"x"}),
                    node(Op::clamp, {in(0), node(Op::neg, {cst(1)}), cst(1)})));
  CHECK_FALSE(
      kq::matches(spec_of("clamp(x, -1, 1)", {"x"}), node(Op::clamp, {in(0), cst(-1), cst(1)})));
  CHECK(kq::matches(spec_of("x + nan", {"x"}),
                    node(Op::add, {in(0), cst(std::numeric_limits<double>::quiet_NaN())})));
}

TEST_CASE("an input the pattern does not name, or a node outside the tree, is refused") {
  kq::OpSpec extra = spec_of("relu(x + residual)", {"x", "residual"});
  extra.inputs.push_back("unused");
  CHECK(kq::matches(extra.semantics, residual_relu));
  CHECK_FALSE(kq::matches(extra, residual_relu));

  // relu(x + r) with a constant no node reads, before the root.
  kq::Expr orphan = parsed("relu(x + r)", {"x", "r"});
  kq::ExprNode c;
  c.op = Op::constant;
  orphan.nodes.insert(orphan.nodes.end() - 1, c);
  orphan.nodes.back().args[0] = 2;
  CHECK_FALSE(kq::matches(orphan, residual_relu));

  // An operand after its user: not a well-formed post-order list.
  kq::Expr forward = parsed("relu(x + r)", {"x", "r"});
  std::swap(forward.nodes[0], forward.nodes[2]);
  forward.nodes[0].args[0] = 2;
  forward.nodes[0].args[1] = 1;
  forward.nodes.back().args[0] = 0;
  CHECK_FALSE(kq::matches(forward, residual_relu));

  CHECK_FALSE(kq::matches(kq::Expr{}, residual_relu));
}
