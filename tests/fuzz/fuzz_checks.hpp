// What the fuzzer asserts about one input, shared with the unit test that replays every finding
// (tests/unit/test_fuzz_regressions.cpp). The input is read as a spec (parse_spec, the text entry
// point load_spec uses) and as a semantics expression. Each returns a description of what is
// wrong, or nothing. Crashes, sanitizer reports, hangs and runaway memory are the fuzzer's to see.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "expr/parser.hpp"
#include "spec/spec.hpp"

namespace kq::fuzz {

// A spec loads, or is refused with a SpecError that names the file and a 1-based position; no
// other exception escapes.
inline std::optional<std::string> check_spec_loader(const std::string& text) {
  try {
    const Spec spec = parse_spec(text, "fuzz.yaml");
    if (spec.shaped) {  // format 2: statements instead of one expression
      if (spec.shaped->program->statements.empty())
        return "a shaped spec loaded without statements";
      if (spec.shaped->timing_points.empty()) return "a shaped spec loaded without timing points";
    } else if (spec.op.semantics.nodes.empty()) {
      return "a spec loaded with an empty expression";
    }
  } catch (const SpecError& e) {
    if (e.line() < 1 || e.column() < 1) return std::string("no position: ") + e.what();
    if (e.file() != "fuzz.yaml") return std::string("wrong file name: ") + e.what();
  }
  return std::nullopt;
}

inline bool same_nodes(const Expr& a, const Expr& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const ExprNode& x = a.nodes[i];
    const ExprNode& y = b.nodes[i];
    const bool same_value = x.value == y.value || (x.value != x.value && y.value != y.value);
    if (x.op != y.op || x.input != y.input || !same_value || x.args[0] != y.args[0] ||
        x.args[1] != y.args[1] || x.args[2] != y.args[2])
      return false;
  }
  return true;
}

// Exactly one of expression and error, an error with a column, and to_text round-trips. to_text
// parenthesises every operand that is an operation, so a long chain (a + b + ...) or many
// negations come back nested deeper than parse_expr takes: that refusal is the one allowed
// (parser.hpp).
inline std::optional<std::string> check_expression(const std::string& text) {
  static const std::vector<std::string> inputs = {"x", "y", "residual"};
  const ExprParseResult r = parse_expr(text, inputs);
  if (r.expr.has_value() == r.error.has_value()) return "neither or both of expr and error";
  if (r.error) {
    if (r.error->column < 1) return "an expression error without a column";
    return std::nullopt;
  }
  const std::string written = to_text(*r.expr, inputs);
  const ExprParseResult again = parse_expr(written, inputs);
  if (!again.expr && again.error->message.find("nests deeper than") != std::string::npos)
    return std::nullopt;
  if (!again.expr) return "to_text wrote what parse_expr refuses: " + written;
  if (!same_nodes(*r.expr, *again.expr)) return "to_text does not round-trip: " + written;
  return std::nullopt;
}

inline std::optional<std::string> check_input(const std::string& text) {
  if (auto bad = check_spec_loader(text)) return bad;
  return check_expression(text);
}

}  // namespace kq::fuzz
