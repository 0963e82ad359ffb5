// The semantics expression language: text -> kq::Expr (plain data, see plugin-api/kq/expr.hpp).
//
// Grammar (whitespace ignored):
//   expr    := compare
//   compare := additive (('<' | '<=' | '>' | '>=' | '==' | '!=') additive)?
//   additive:= term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
// Numbers: decimal literals with optional fraction and exponent (1, 0.5, 1e-3, .25), plus the
// names inf and nan. Names: the spec's inputs, or the functions relu, abs, exp, log, sqrt, tanh,
// sigmoid, erf, gelu, silu (one argument), max, min (two), select, clamp (three).
// A name is looked up as a function first, then as the constant inf or nan, then as an input: an
// input named like a function or a constant cannot be referenced (the error says so). A leading
// '-' is always the neg operator, so "-1" is neg(1), never a negative constant. Comparisons do
// not chain: "a < b < c" is an error; write "(a < b) < c". Nesting ('(', calls, unary '-') is
// limited to 256 levels so that hostile text cannot exhaust the stack.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kq/expr.hpp"

namespace kq {

struct ExprParseError {
  int column = 0;  // 1-based column in the expression text
  std::string message;
};

struct ExprParseResult {
  std::optional<Expr> expr;             // set on success
  std::optional<ExprParseError> error;  // set on failure
};

// Parses `text`. Names that are not functions resolve to an index into `input_names`; any other
// name is an error at its column. Never throws for bad text.
ExprParseResult parse_expr(std::string_view text, const std::vector<std::string>& input_names);

// Writes an expression back as text in the language (fully parenthesised); used in reports and
// by code generators that want a readable comment. Constants use 17 significant digits, so for
// anything parse_expr produced, parse_expr(to_text(e)) gives the identical node list, as long as
// the text written nests no deeper than parse_expr's 256 levels: every operand that is an
// operation gets parentheses, so a chain of more than 256 operators (a + b + ...) or more than
// 128 negations comes back deeper than that, and parse_expr refuses it as nesting too deep.
std::string to_text(const Expr& e, const std::vector<std::string>& input_names);

}  // namespace kq
