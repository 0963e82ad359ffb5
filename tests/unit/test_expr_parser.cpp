// The semantics expression language: grammar, names, literals, errors and the way back to text.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "expr/parser.hpp"

namespace {

using kq::Expr;
using kq::ExprParseError;
using kq::Op;

const std::vector<std::string> kNames{"x", "y", "z"};

// Every operand before its user, unused operand slots -1, and the root last: the contract of
// kq::Expr. One assertion per expression, however long.
bool is_post_order(const Expr& e) {
  if (e.nodes.empty()) return false;
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    const auto& n = e.nodes[i];
    for (int a = 0; a < 3; ++a) {
      const bool used = a < kq::arity(n.op);
      if (used && (n.args[a] < 0 || n.args[a] >= static_cast<int>(i))) return false;
      if (!used && n.args[a] != -1) return false;
    }
  }
  return true;
}

Expr parse_ok(std::string_view text, const std::vector<std::string>& names = kNames) {
  auto r = kq::parse_expr(text, names);
  INFO("text: ", std::string(text));
  const std::string why =
      r.error ? "column " + std::to_string(r.error->column) + ": " + r.error->message : "";
  INFO("error: ", why);
  REQUIRE(r.expr.has_value());
  CHECK_FALSE(r.error.has_value());
  CHECK(r.expr->text == text);
  CHECK(is_post_order(*r.expr));
  return *r.expr;
}

ExprParseError parse_error(std::string_view text, const std::vector<std::string>& names = kNames) {
  auto r = kq::parse_expr(text, names);
  INFO("text: ", std::string(text));
  REQUIRE(r.error.has_value());
  CHECK_FALSE(r.expr.has_value());
  return *r.error;
}

// The tree as an S-expression, so expected structure is readable in the test.
std::string sexpr(const Expr& e, int i, const std::vector<std::string>& names) {
  const auto& n = e.nodes[i];
  if (n.op == Op::constant) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", n.value);
    return buf;
  }
  if (n.op == Op::input) return names.at(n.input);
  std::string s = "(" + std::string(kq::to_string(n.op));
  for (int a = 0; a < kq::arity(n.op); ++a) s += " " + sexpr(e, n.args[a], names);
  return s + ")";
}

std::string tree(std::string_view text, const std::vector<std::string>& names = kNames) {
  Expr e = parse_ok(text, names);
  return sexpr(e, e.root(), names);
}

double literal(std::string_view text) {
  Expr e = parse_ok(text);
  REQUIRE(e.nodes.size() == 1);
  REQUIRE(e.nodes[0].op == Op::constant);
  return e.nodes[0].value;
}

bool same_nodes(const Expr& a, const Expr& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const auto &p = a.nodes[i], &q = b.nodes[i];
    if (p.op != q.op || p.input != q.input ||
        std::bit_cast<std::uint64_t>(p.value) != std::bit_cast<std::uint64_t>(q.value))
      return false;
    for (int k = 0; k < 3; ++k)
      if (p.args[k] != q.args[k]) return false;
  }
  return true;
}

void check_error(std::string_view text, int column, const std::string& needle,
                 const std::vector<std::string>& names = kNames) {
  const ExprParseError err = parse_error(text, names);
  INFO("text: ", std::string(text), "  message: ", err.message);
  CHECK(err.column == column);
  CHECK(err.message.find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("the node list is post-order with operands before users and the root last") {
  Expr e = parse_ok("x + 2 * y");
  REQUIRE(e.nodes.size() == 5);
  CHECK(e.nodes[0].op == Op::input);
  CHECK(e.nodes[0].input == 0);
  CHECK(e.nodes[1].op == Op::constant);
  CHECK(e.nodes[1].value == 2.0);
  CHECK(e.nodes[2].op == Op::input);
  CHECK(e.nodes[2].input == 1);
  CHECK(e.nodes[3].op == Op::mul);
  CHECK(e.nodes[3].args[0] == 1);
  CHECK(e.nodes[3].args[1] == 2);
  CHECK(e.nodes[4].op == Op::add);
  CHECK(e.nodes[4].args[0] == 0);
  CHECK(e.nodes[4].args[1] == 3);
  CHECK(e.root() == 4);
}

TEST_CASE("precedence and associativity") {
  CHECK(tree("x - y - z") == "(sub (sub x y) z)");
  CHECK(tree("x / y / z") == "(div (div x y) z)");
  CHECK(tree("x + y * z") == "(add x (mul y z))");
  CHECK(tree("x * y + z") == "(add (mul x y) z)");
  CHECK(tree("x - y + z") == "(add (sub x y) z)");
  CHECK(tree("x / y * z") == "(mul (div x y) z)");
  CHECK(tree("-x * y") == "(mul (neg x) y)");
  CHECK(tree("x * -y") == "(mul x (neg y))");
  CHECK(tree("--x") == "(neg (neg x))");
  CHECK(tree("x - -y") == "(sub x (neg y))");
  CHECK(tree("-(x + y)") == "(neg (add x y))");
  CHECK(tree("(x + y) * z") == "(mul (add x y) z)");
  CHECK(tree("((x))") == "x");
  CHECK(tree("x + y < z * 2") == "(lt (add x y) (mul z 2))");
  CHECK(tree("x <= y") == "(le x y)");
  CHECK(tree("x > -y") == "(gt x (neg y))");
  CHECK(tree("x >= y + 1") == "(ge x (add y 1))");
  CHECK(tree("x == y") == "(eq x y)");
  CHECK(tree("x != y") == "(ne x y)");
  CHECK(tree("(x < y) < z") == "(lt (lt x y) z)");
  CHECK(tree("select(x > 0, x, y * 0.5)") == "(select (gt x 0) x (mul y 0.5))");
  CHECK(tree("relu(x + y)") == "(relu (add x y))");
}

TEST_CASE("every function with its arity") {
  struct Fn {
    const char* name;
    Op op;
    int arity;
  };
  const Fn fns[] = {
      {"relu", Op::relu, 1},       {"abs", Op::abs, 1},     {"exp", Op::exp, 1},
      {"log", Op::log, 1},         {"sqrt", Op::sqrt, 1},   {"tanh", Op::tanh, 1},
      {"sigmoid", Op::sigmoid, 1}, {"erf", Op::erf, 1},     {"gelu", Op::gelu, 1},
      {"silu", Op::silu, 1},       {"max", Op::max, 2},     {"min", Op::min, 2},
      {"select", Op::select, 3},   {"clamp", Op::clamp, 3},
  };
  for (const Fn& f : fns) {
    CAPTURE(f.name);
    CHECK(kq::arity(f.op) == f.arity);
    std::string args;
    for (int a = 0; a < f.arity; ++a) args += (a ? ", " : "") + kNames[a];
    Expr e = parse_ok(std::string(f.name) + "(" + args + ")");
    REQUIRE(static_cast<int>(e.nodes.size()) == f.arity + 1);
    CHECK(e.nodes.back().op == f.op);
    for (int a = 0; a < f.arity; ++a) {
      CHECK(e.nodes.back().args[a] == a);
      CHECK(e.nodes[a].input == a);
    }

    const std::string plural = f.arity == 1 ? " argument" : " arguments";
    const std::string more = std::string(f.name) + "(" + args + ", x)";
    check_error(more, 1,
                std::string(f.name) + " takes " + std::to_string(f.arity) + plural + ", got " +
                    std::to_string(f.arity + 1));
    std::string fewer_args;
    for (int a = 0; a + 1 < f.arity; ++a) fewer_args += (a ? ", " : "") + kNames[a];
    check_error(std::string(f.name) + "(" + fewer_args + ")", 1,
                std::string(f.name) + " takes " + std::to_string(f.arity) + plural + ", got " +
                    std::to_string(f.arity - 1));
  }
}

TEST_CASE("literals") {
  CHECK(literal("1") == 1.0);
  CHECK(literal("0") == 0.0);
  CHECK(literal("0.5") == 0.5);
  CHECK(literal("1e-3") == 1e-3);
  CHECK(literal(".25") == 0.25);
  CHECK(literal("2.5E+10") == 2.5e10);
  CHECK(literal("2.5e10") == 2.5e10);
  CHECK(literal("1.") == 1.0);
  CHECK(literal("007") == 7.0);
  CHECK(literal("0.1") == 0.1);
  CHECK(literal("1.7976931348623157e308") == 1.7976931348623157e308);
  CHECK(literal("4.9406564584124654e-324") == 4.9406564584124654e-324);  // subnormal
  CHECK(literal("inf") == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(literal("nan")));
  CHECK(tree("-inf") == "(neg inf)");
  CHECK(tree("-1") == "(neg 1)");  // a minus sign is always the neg operator
}

TEST_CASE("whitespace is ignored, and names may hold digits and underscores") {
  CHECK(tree("  x\t+\n y  ") == "(add x y)");
  CHECK(tree("relu ( x )") == "(relu x)");
  CHECK(tree("max(x,y)") == "(max x y)");
  CHECK(tree("x<=y") == "(le x y)");
  const std::vector<std::string> names{"in_0", "_bias", "Residual2"};
  CHECK(tree("in_0 + _bias * Residual2", names) == "(add in_0 (mul _bias Residual2))");
}

TEST_CASE("to_text writes fully parenthesised text that parses to the same nodes") {
  CHECK(kq::to_text(parse_ok("relu(x + y)"), kNames) == "relu(x + y)");
  CHECK(kq::to_text(parse_ok("x - y - z"), kNames) == "(x - y) - z");
  CHECK(kq::to_text(parse_ok("x - (y - z)"), kNames) == "x - (y - z)");
  CHECK(kq::to_text(parse_ok("x + y * z"), kNames) == "x + (y * z)");
  CHECK(kq::to_text(parse_ok("-x * y"), kNames) == "(-x) * y");
  CHECK(kq::to_text(parse_ok("--x"), kNames) == "-(-x)");
  CHECK(kq::to_text(parse_ok("clamp(x, 0, 1e-3)"), kNames) == "clamp(x, 0, 0.001)");
  CHECK(kq::to_text(parse_ok("0.1 + inf * nan"), kNames) == "0.10000000000000001 + (inf * nan)");

  const char* texts[] = {
      "x",
      "1",
      "relu(x + y)",
      "x - y - z",
      "x / (y / z)",
      "-x * -y",
      "---x",
      "(x < y) == (z >= 1)",
      "x != y",
      "select(x > 0, x, 0.01 * x)",
      "clamp(gelu(x) + silu(y), -1, 1)",
      "max(min(x, y), z) / sqrt(abs(x) + 1e-5)",
      "exp(-x) + log(y) - tanh(z) * sigmoid(x) + erf(y)",
      "2.5E+10 * .25 + 1.7976931348623157e308 + 4.9406564584124654e-324 + 0.1 + 1e-3",
      "inf - nan + -inf",
  };
  for (const char* text : texts) {
    CAPTURE(text);
    const Expr e = parse_ok(text);
    const std::string written = kq::to_text(e, kNames);
    CAPTURE(written);
    const Expr again = parse_ok(written);
    CHECK(same_nodes(e, again));
    CHECK(kq::to_text(again, kNames) == written);
  }
}

TEST_CASE("to_text of hand-built expressions never reads out of bounds") {
  Expr e;
  kq::ExprNode c;
  c.op = Op::constant;
  c.value = -1.5;
  e.nodes.push_back(c);
  CHECK(kq::to_text(e, kNames) == "-1.5");
  kq::ExprNode n;
  n.op = Op::mul;
  n.args[0] = 0;
  n.args[1] = 0;
  e.nodes.push_back(n);
  CHECK(kq::to_text(e, kNames) == "(-1.5) * (-1.5)");

  Expr bad;
  kq::ExprNode in;
  in.op = Op::input;
  in.input = 7;
  bad.nodes.push_back(in);
  CHECK(kq::to_text(bad, kNames) == "<input 7>");
  kq::ExprNode forward;
  forward.op = Op::relu;
  forward.args[0] = 5;
  bad.nodes.push_back(forward);
  CHECK(kq::to_text(bad, kNames) == "<bad node 1>");
  CHECK(kq::to_text(Expr{}, kNames).empty());
}

TEST_CASE("errors carry the column of the offending token and say what is wrong") {
  check_error("", 1, "empty expression");
  check_error("   ", 1, "empty expression");
  check_error("x + $", 5, "unexpected character '$'");
  check_error("x[0] + 1", 2, "unexpected character '['");  // statement tokens: format 2 only
  check_error("x = 1", 3, "equality is written '=='");
  check_error("x + \x01", 5, "unexpected control character 0x01");
  check_error("x + \xC3\xA9", 5, "unexpected character '\xC3\xA9'");
  check_error("x +", 4, "unexpected end");
  check_error("x * ", 5, "unexpected end");
  check_error("(x + y", 7, "missing ')' to close '(' at column 1");
  check_error("max(x, y", 9, "missing ')' to close 'max(' at column 4");
  check_error("x + foo", 5, "unknown name 'foo'");
  check_error("x + foo", 5, "neither an input (inputs: x, y, z) nor a function");
  check_error("foo", 1, "there are no inputs", {});
  check_error("max(x)", 1, "max takes 2 arguments, got 1");
  check_error("x + relu(x, y)", 5, "relu takes 1 argument, got 2");
  check_error("select()", 1, "select takes 3 arguments, got 0");
  check_error("1.2.3 + x", 1, "malformed number '1.2.3'");
  check_error("x + 1e", 5, "malformed number '1e'");
  check_error("x + 2x", 5, "malformed number '2x'");
  check_error("1e999", 1, "outside the float64 range");
  check_error("x y", 3, "unexpected 'y' after a complete expression");
  check_error("x + 1 2", 7, "unexpected number '2' after a complete expression");
  check_error("x)", 2, "unmatched ')'");
  check_error("x, y", 2, "',' outside a function call");
  check_error("x < y < z", 7, "comparisons do not chain");
  check_error("(x == y != z)", 9, "comparisons do not chain");
  check_error("x = y", 3, "'=='");
  check_error("!x", 1, "'!='");
  check_error("relu", 1, "'relu' is a function: call it as relu(...) with 1 argument");
  check_error("x(1)", 1, "'x' is an input, not a function");
  check_error("nan(x)", 1, "'nan' is a constant, not a function");
  check_error("max(x y)", 7, "expected ',' or ')' after argument 1 of max but found 'y'");
  check_error("(x y)", 4, "expected ')' to close '(' at column 1 but found 'y'");
  check_error("x * ()", 6, "expected a number, a name or '(' but found ')'");
  check_error("max(x, )", 8, "expected a number, a name or '(' but found ')'");
  check_error("*x", 1, "expected a number, a name or '(' but found '*'");
}

TEST_CASE("an input named like a function cannot be referenced: function names win") {
  const std::vector<std::string> names{"x", "relu"};
  check_error("x + relu", 5, "function names take precedence over inputs", names);
  CHECK(tree("relu(x)", names) == "(relu x)");
  const std::vector<std::string> const_names{"inf"};
  CHECK(tree("inf", const_names) == "inf");  // the constant, not input 0
}

TEST_CASE("nesting is limited so hostile text cannot exhaust the stack") {
  const std::string ok = std::string(200, '(') + "x" + std::string(200, ')');
  CHECK(tree(ok) == "x");
  const std::string deep = std::string(300, '(') + "x" + std::string(300, ')');
  check_error(deep, 257, "nests deeper than 256 levels");
  check_error(std::string(1000, '-') + "x", 257, "nests deeper");
  // Long chains are loops, not recursion.
  std::string chain = "x";
  for (int i = 0; i < 10000; ++i) chain += " + y";
  CHECK(parse_ok(chain).nodes.size() == 20001);
}

// Found by the fuzzer (tests/data/fuzz_regressions/expr_163_negations.txt): to_text
// parenthesises every operand that is an operation, so what it writes can nest deeper than the
// text it came from; past 256 levels parse_expr refuses it as too deep, and says so.
TEST_CASE("to_text of a long chain or many negations round-trips only within the nesting limit") {
  std::string chain = "x";
  for (int i = 0; i < 300; ++i) chain += " + y";
  const kq::ExprParseResult again = kq::parse_expr(kq::to_text(parse_ok(chain), kNames), kNames);
  REQUIRE(again.error);
  CHECK(again.error->message.find("nests deeper than 256 levels") != std::string::npos);
  const std::string negations = std::string(163, '-') + ".03";
  const std::string written = kq::to_text(parse_ok(negations), kNames);
  CHECK(written.find("-(-(") == 0);
  CHECK(kq::parse_expr(written, kNames).error->message.find("nests deeper") != std::string::npos);
  // Within the limit it round-trips.
  const std::string fewer = std::string(100, '-') + ".03";
  const Expr e = parse_ok(fewer);
  CHECK(parse_ok(kq::to_text(e, kNames)).nodes.size() == e.nodes.size());
}

TEST_CASE("arbitrary bytes never throw: exactly one of expr and error is set") {
  std::mt19937 rng(12345);
  const std::string alphabet = "xyz0123456789.eE+-*/()<>=!, \tmaxrelu\x80\xff$";
  int parsed = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text;
    const int len = static_cast<int>(rng() % 16);
    for (int i = 0; i < len; ++i) text += alphabet[rng() % alphabet.size()];
    CAPTURE(text);
    kq::ExprParseResult r;
    try {
      r = kq::parse_expr(text, kNames);
    } catch (...) {
      FAIL("parse_expr threw");
    }
    // Checked with `if` so that 20000 trials do not flood the assertion count.
    if (r.expr.has_value() == r.error.has_value()) FAIL_CHECK("exactly one must be set");
    if (r.error) {
      ++refused;
      if (r.error->column < 1 || r.error->column > static_cast<int>(text.size()) + 1 ||
          r.error->message.empty())
        FAIL_CHECK("bad error: column " << r.error->column << ": " << r.error->message);
    } else if (r.expr) {
      ++parsed;
      if (!is_post_order(*r.expr)) FAIL_CHECK("not post-order");
      const auto again = kq::parse_expr(kq::to_text(*r.expr, kNames), kNames);
      if (!again.expr || !same_nodes(*r.expr, *again.expr)) FAIL_CHECK("no round trip");
    }
  }
  CHECK(parsed > 100);
  CHECK(refused > 100);
}
