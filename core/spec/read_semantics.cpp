// semantics: the expression that defines the output, in core/expr's language.
#include "expr/parser.hpp"
#include "spec/sections.hpp"

namespace kq::spec_detail {
namespace {

// The 1-based file column of the expression's column `expr_column`, when the scalar is written
// on one line exactly as its value (plain) or inside quotes with no escapes; 0 otherwise.
int file_column(const Field& f, const std::string& value, int expr_column) {
  const YAML::Mark& m = f.mark();
  const std::string_view text = f.source().text;
  if (m.is_null() || value.find('\n') != std::string::npos) return 0;
  const auto pos = static_cast<std::size_t>(m.pos);
  if (pos >= text.size()) return 0;
  const int start = m.column + 1;  // 1-based column of the scalar's first character
  if (text.compare(pos, value.size(), value) == 0) return start + expr_column - 1;
  const char quote = text[pos];
  if ((quote == '"' || quote == '\'') && text.compare(pos + 1, value.size(), value) == 0 &&
      pos + 1 + value.size() < text.size() && text[pos + 1 + value.size()] == quote) {
    return start + 1 + expr_column - 1;
  }
  return 0;
}

}  // namespace

Expr read_semantics(const Field& f, const std::vector<std::string>& inputs,
                    const std::vector<Field>& input_fields) {
  const std::string text = read_string(f);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) f.fail("the expression is empty");
  ExprParseResult parsed = parse_expr(text, inputs);
  if (!parsed.expr) {
    const ExprParseError err = parsed.error.value_or(ExprParseError{1, "cannot parse"});
    const int column = file_column(f, text, err.column);
    if (column > 0) {
      YAML::Mark at = f.mark();
      at.column = column - 1;
      f.source().fail(at, f.path(), err.message);
    }
    f.fail(err.message + " (at column " + std::to_string(err.column) + " of the expression)");
  }
  Expr expr = std::move(*parsed.expr);
  // One pass over the nodes, so that many inputs and a long expression cost their sum.
  std::vector<bool> used(inputs.size(), false);
  for (const ExprNode& n : expr.nodes) {
    if (n.op == Op::input) used[static_cast<std::size_t>(n.input)] = true;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!used[i]) input_fields[i].fail("input '" + inputs[i] + "' is not used by the semantics");
  }
  if (expr.text.empty()) expr.text = text;
  return expr;
}

}  // namespace kq::spec_detail
