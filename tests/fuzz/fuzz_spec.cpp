// libFuzzer target over the spec loader and the expression parser. Each input is read as a spec
// (parse_spec, the text entry point load_spec uses) and as a semantics expression. A finding is a
// crash, a sanitizer report, a hang or memory past -rss_limit_mb, any exception other than
// SpecError, a SpecError without a position, or an expression that does not round-trip through
// to_text. tools/fuzz.sh builds and runs it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "expr/parser.hpp"
#include "spec/spec.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_spec finding: %s\n", what.c_str());
  std::abort();
}

void fuzz_spec_loader(const std::string& text) {
  try {
    const kq::Spec spec = kq::parse_spec(text, "fuzz.yaml");
    if (spec.op.semantics.nodes.empty()) finding("a spec loaded with an empty expression");
  } catch (const kq::SpecError& e) {
    if (e.line() < 1 || e.column() < 1) finding(std::string("no position: ") + e.what());
    if (e.file() != "fuzz.yaml") finding(std::string("wrong file name: ") + e.what());
  }
}

bool same_nodes(const kq::Expr& a, const kq::Expr& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const kq::ExprNode& x = a.nodes[i];
    const kq::ExprNode& y = b.nodes[i];
    const bool same_value = x.value == y.value || (x.value != x.value && y.value != y.value);
    if (x.op != y.op || x.input != y.input || !same_value || x.args[0] != y.args[0] ||
        x.args[1] != y.args[1] || x.args[2] != y.args[2])
      return false;
  }
  return true;
}

void fuzz_expression(const std::string& text) {
  static const std::vector<std::string> inputs = {"x", "y", "residual"};
  const kq::ExprParseResult r = kq::parse_expr(text, inputs);
  if (r.expr.has_value() == r.error.has_value()) finding("neither or both of expr and error");
  if (r.error) {
    if (r.error->column < 1) finding("an expression error without a column");
    return;
  }
  const std::string written = kq::to_text(*r.expr, inputs);
  const kq::ExprParseResult again = kq::parse_expr(written, inputs);
  if (!again.expr) finding("to_text wrote what parse_expr refuses: " + written);
  if (!same_nodes(*r.expr, *again.expr)) finding("to_text does not round-trip: " + written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz_spec_loader(text);
  fuzz_expression(text);
  return 0;
}
