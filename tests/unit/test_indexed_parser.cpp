// The statements language: what parses into what, and every error with its line:column and the
// name at fault.
#include <doctest/doctest.h>

#include <string>

#include "indexed/parser.hpp"
#include "kq/indexed_text.hpp"

namespace {

using namespace kq::ix;
using kq::DType;

Declarations rows() {
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
  d.params = {{"eps", 1e-5}};
  d.tensors = {
      {"x", Role::input, DType::f32, {"M", "N"}}, {"w", Role::input, DType::f32, {"N"}},
      {"t", Role::input, DType::i64, {"M"}},      {"mx", Role::temporary, DType::f32, {"M"}},
      {"s", Role::temporary, DType::f32, {"M"}},  {"y", Role::output, DType::f32, {"M", "N"}},
      {"r", Role::output, DType::f32, {"M"}}};
  return d;
}

Program parse_ok(std::string_view text, const Declarations& d = rows()) {
  ParseResult r = parse_program(text, d);
  INFO("error: ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  return *r.program;
}

// The error's text, which must start with "line:column:".
std::string parse_error(std::string_view text, const Declarations& d = rows()) {
  ParseResult r = parse_program(text, d);
  REQUIRE(r.error.has_value());
  return r.error->text();
}

void check_error(std::string_view text, std::string_view at, std::string_view mentions,
                 const Declarations& d = rows()) {
  const std::string e = parse_error(text, d);
  INFO("error: ", e);
  CHECK(e.rfind(std::string(at) + ":", 0) == 0);
  CHECK(e.find(mentions) != std::string::npos);
}

}  // namespace

TEST_CASE("softmax parses into four statements with reductions over n") {
  Program p = parse_ok(
      "mx[m] = max(n, x[m, n])\n"
      "s[m] = sum(n, exp(x[m, n] - mx[m]))\n"
      "# a comment line, and a blank line\n"
      "\n"
      "y[m, n] = exp(x[m, n] - mx[m]) / s[m]\n"
      "r[m] = max(mx[m], 0)  # the binary max\n");
  REQUIRE(p.statements.size() == 4);
  CHECK(p.statements[2].line == 5);
  const Node& root0 = p.nodes[static_cast<std::size_t>(p.statements[0].root)];
  CHECK(root0.kind == NodeKind::reduce);
  CHECK(root0.reduction == Reduction::max);
  const Node& root3 = p.nodes[static_cast<std::size_t>(p.statements[3].root)];
  CHECK(root3.kind == NodeKind::apply);
  CHECK(root3.op == kq::Op::max);
  // The reduction's index ranges over N, learnt from x's second dimension.
  CHECK(p.indices[static_cast<std::size_t>(root0.over[0])].extent.name == "N");
}

TEST_CASE("reductions over several indices, scans with flags, gathers and index arithmetic") {
  Declarations d;
  d.dims = {{"B", DimKind::free},    {"C", DimKind::free}, {"H", DimKind::reduced},
            {"W", DimKind::reduced}, {"G", DimKind::free}, {"CG", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f32, {"B", "C", "H", "W"}},
               {"v", Role::input, DType::f32, {"B", "G", "CG"}},
               {"t", Role::input, DType::i32, {"B"}},
               {"a", Role::output, DType::f32, {"B", "C"}},
               {"c", Role::output, DType::f32, {"B", "C", "H", "W"}},
               {"g", Role::output, DType::f32, {"B"}},
               {"q", Role::output, DType::f32, {"B", "C"}}};
  Program p = parse_ok(
      "a[b, k] = sum((h, w), x[b, k, h, w]) / (H * W)\n"
      "c[b, k, h, w] = cumsum(w, x[b, k, h, w], exclusive, reverse)\n"
      "g[b] = x[b, t[b], 0, W - 1]\n"
      "q[b, k] = max((h, w), x[b, k, h, w]) + v[b, 0, 0]\n",
      d);
  const Node& scan = p.nodes[static_cast<std::size_t>(p.statements[1].root)];
  CHECK(scan.kind == NodeKind::scan);
  CHECK(scan.exclusive);
  CHECK(scan.reverse);
  CHECK(p.statements[1].scan_index == p.statements[1].lhs[3]);
  const Node& q = p.nodes[static_cast<std::size_t>(p.statements[3].root)];
  CHECK(p.nodes[static_cast<std::size_t>(q.args[0])].over.size() == 2);
}

TEST_CASE("a scalar statement and a view through index arithmetic") {
  Declarations d;
  d.dims = {{"N", DimKind::free}, {"G", DimKind::free}, {"CG", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f32, {"N"}},
               {"v", Role::input, DType::f32, {"G", "CG"}},
               {"total", Role::output, DType::f64, {}},
               {"flat", Role::output, DType::f32, {"G", "CG"}}};
  parse_ok(
      "total = sum(i, x[i])\n"
      "flat[g, j] = x[g * CG + j] + total\n",
      d);
}

TEST_CASE("an index used but never bound") {
  check_error("y[m, n] = x[m, k]", "1:16", "index 'k' is used but never bound");
}

TEST_CASE("an index bound twice") {
  check_error("y[m, m] = x[m, m]", "1:6", "index 'm' is bound twice");
  check_error("r[m] = sum(n, sum(n, x[m, n]))", "1:19", "index 'n' is bound twice");
}

TEST_CASE("a reduction over an index the left-hand side binds") {
  check_error("r[m] = sum(m, x[m, 0])", "1:12", "reduction over 'm'");
  check_error("r[m] = max(m, x[m, 0])", "1:12", "reduction over 'm'");
}

TEST_CASE("a tensor accessed with the wrong number of subscripts") {
  check_error("r[m] = x[m]", "1:8", "'x' has 2 dimension(s) but is accessed with 1");
  check_error("r[m, n] = w[n]", "1:1", "'r' has 1 dimension(s) but the left-hand side gives 2");
}

TEST_CASE("a subscript whose range does not match the dimension") {
  check_error("y[m, n] = x[n, m]", "1:13", "index 'n' ranges over N but dimension 1 of 'x'");
  // Index arithmetic says it is meant: the range is then checked when evaluating.
  parse_ok("y[m, n] = x[n + 0, m + 0]\nr[m] = 0");
}

TEST_CASE("a gather through a non-integer tensor") {
  check_error("r[m] = x[m, w[0]]", "1:13", "gather through 'w', a f32 tensor");
  parse_ok("r[m] = x[m, t[m]]\ny[m, n] = 0");
}

TEST_CASE("a subscript that is not an index expression") {
  check_error("r[m] = x[m, eps]", "1:13", "a subscript is an index expression");
  check_error("r[m] = x[m, 1.5]", "1:13", "integers");
}

TEST_CASE("a statement assigning an input") {
  check_error("r[m] = 0\nx[m, n] = 1", "2:1", "'x' is an input");
}

TEST_CASE("a tensor assigned twice") {
  check_error("r[m] = 0\ny[m, n] = 1\nr[m] = 1", "3:1", "'r' is assigned twice");
}

TEST_CASE("a temporary used before it is assigned") {
  check_error("y[m, n] = x[m, n] - mx[m]\nr[m] = 0", "1:21", "'mx' is used before it is assigned");
  check_error("r[m] = r[m] + 1\ny[m, n] = 0", "1:8", "'r' is used before it is assigned");
}

TEST_CASE("an output never assigned") {
  check_error("y[m, n] = x[m, n]", "1:19", "output 'r' is never assigned");
}

TEST_CASE("an unknown name, with the nearest known name") {
  check_error("r[m] = sum(n, xx[m, n])", "1:15", "unknown name 'xx' (did you mean 'x'?)");
  check_error("r[m] = ep + 0\ny[m, n] = 0", "1:8", "did you mean 'eps'?");
  check_error("q[m] = 0", "1:1", "unknown tensor 'q'");
}

TEST_CASE("scans run along an index of the left-hand side, flags in order") {
  check_error("y[m, n] = cumsum(k, x[m, n])\nr[m] = 0", "1:18", "runs along an index");
  check_error("y[m, n] = cumsum(n, x[m, n], reverse, exclusive)\nr[m] = 0", "1:39",
              "'exclusive' or 'reverse'");
  check_error("r[m] = sum(n, cumsum(m, x[m, n]))\ny[m, n] = 0", "1:15", "not supported");
}

TEST_CASE("syntax errors name their column") {
  check_error("r[m] = (x[m, 0] + 1\ny[m, n] = 0", "1:20", "expected ')'");
  check_error("r[m] 0", "1:6", "expected '='");
  check_error("r[m] = exp(1, 2)", "1:8", "exp takes 1 argument(s), got 2");
  check_error("r[m] = 1 $ 2", "1:10", "unexpected character '$'");
  // The expression language's lexer: a whole UTF-8 character, a number past float64's range.
  check_error("r[m] = 1 \xC3\xA9 2", "1:10", "unexpected character '\xC3\xA9'");
  check_error("r[m] = 1e999 * x[m, 0]", "1:8", "outside the float64 range");
  check_error("r[m] = x[m, 0] +\ny[m, n] = 0", "1:17", "the end of the line");
}

TEST_CASE("the range of a reduction's index must be learnt from a plain subscript") {
  check_error("r[m] = sum(k, x[m, k + 1])\ny[m, n] = 0", "1:8", "range of index 'k'");
}

TEST_CASE("declarations: unknown dims and reserved or repeated names") {
  Declarations d = rows();
  d.tensors.push_back({"z", Role::input, DType::f32, {"K"}});
  CHECK(parse_error("r[m] = 0", d).find("undeclared dim 'K'") != std::string::npos);
  d = rows();
  d.tensors.push_back({"sum", Role::input, DType::f32, {"M"}});
  CHECK(parse_error("r[m] = 0", d).find("'sum'") != std::string::npos);
  d = rows();
  d.params.push_back({"x", 1.0});
  CHECK(parse_error("r[m] = 0", d).find("declared twice") != std::string::npos);
}

TEST_CASE("a subscript's constant must be an integer: NaN, infinities and 1e30 are refused") {
  // Found by the fuzzer: a NaN subscript was converted to an integer before it was checked.
  for (const char* c : {"nan", "inf", "1e30", "0.5"}) {
    CAPTURE(c);
    check_error(std::string("r[m] = x[m, m - m + ") + c + "]", "1",
                "a subscript's constants are integers");
  }
}

TEST_CASE("a reduction's index with its range written: a window, in no subscript alone") {
  // A max over windows of 3 along n (as a pooling): r[m] reads x[m, 0..2].
  Program p = parse_ok("r[m] = max(k : 3, x[m, k + 0])\ny[m, n] = sum((a : 2, b : N), x[m, b])");
  const Node& mx = p.nodes[static_cast<std::size_t>(p.statements[0].root)];
  REQUIRE(mx.kind == NodeKind::reduce);
  const IndexVar& k = p.indices[static_cast<std::size_t>(mx.over[0])];
  CHECK(k.ranged);
  CHECK(k.extent == Extent(3));
  const Node& sum = p.nodes[static_cast<std::size_t>(p.statements[1].root)];
  CHECK(p.indices[static_cast<std::size_t>(sum.over[1])].extent.dim == 1);  // N
  CHECK_FALSE(p.indices[static_cast<std::size_t>(p.statements[1].lhs[0])].ranged);
  const std::string text = canonical_text(p);
  INFO(text);
  CHECK(text.find("out1[i0] = max(i1 : 3, in0[i0, add(i1, 0)])") != std::string::npos);
  CHECK(text.find("sum((i3 : 2, i2 : d1), in0[i0, i2])") != std::string::npos);
  // Without a range, nothing changes: the index learns it from its subscript.
  const std::string plain = canonical_text(parse_ok("r[m] = max(n, x[m, n])\ny[m, n] = x[m, n]"));
  CHECK(plain.find("out1[i0] = max(i1, in0[i0, i1])") != std::string::npos);

  check_error("r[m] = max(k : 0, x[m, k + 0])", "1:16", "the range of 'k'");
  check_error("r[m] = max(k : 2000000000000, x[m, k + 0])", "1:16", "an integer in [1, 2^40]");
  check_error("r[m] = max(k : 2.5, x[m, k + 0])", "1:16", "is number '2.5'");
  check_error("r[m] = max(k : Q, x[m, k + 0])", "1:16", "'Q' is not a dim");
  check_error("r[m] = max(k :, x[m, k + 0])", "1:15", "is missing");
  // A bare index over a dim of another extent is still an error: write index arithmetic.
  check_error("r[m] = max(k : 3, x[m, k])", "1:24", "index 'k' ranges over 3");
}
