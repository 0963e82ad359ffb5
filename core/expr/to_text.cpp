// Writes an Expr back in the language. Every operator application that is an operand of another
// operator is parenthesised, so the text never depends on precedence; function arguments and the
// root are written bare. For any expression parse_expr produced, parsing the text again gives the
// identical node list (constants are written with 17 significant digits, which round-trips).
// Hand-built expressions may not round-trip exactly: a negative constant comes back as neg of a
// positive one, a NaN constant loses its sign and payload, and a node used twice is written twice.
// Malformed nodes are written as <bad node N> rather than read out of bounds.
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "expr/parser.hpp"
#include "expr/syntax.hpp"

namespace kq {
namespace {

// Bare digits for a non-negative constant; the caller adds the sign.
void append_magnitude(std::string& out, double v) {
  if (std::isinf(v)) {
    out += syntax::kInf;
    return;
  }
  char buf[64];
  // to_chars with precision 17 is %.17g without the locale's decimal separator.
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
  out.append(buf, r.ptr);
}

// The tree is walked with an explicit stack, so a very deep hand-built expression cannot
// overflow the call stack.
class Writer {
 public:
  Writer(const Expr& e, const std::vector<std::string>& names) : e_(e), names_(names) {}

  std::string write() {
    if (e_.nodes.empty()) return {};
    todo_.push_back(Item{e_.root(), false, {}});
    while (!todo_.empty()) {
      const Item item = todo_.back();
      todo_.pop_back();
      if (item.node < 0)
        out_ += item.literal;
      else
        visit(item.node, item.as_operand);
    }
    return std::move(out_);
  }

 private:
  struct Item {
    int node;         // < 0: write `literal` instead
    bool as_operand;  // an operand of an operator, which needs parentheses around an operation
    std::string_view literal;
  };

  // Pieces are pushed in reverse, since the stack pops the last one first.
  void later(std::initializer_list<Item> pieces) {
    for (auto it = pieces.end(); it != pieces.begin();) todo_.push_back(*--it);
  }
  static Item text(std::string_view s) { return Item{-1, false, s}; }
  static Item operand(int node) { return Item{node, true, {}}; }
  static Item argument(int node) { return Item{node, false, {}}; }

  bool valid_operand(int user, int arg) const { return arg >= 0 && arg < user; }

  void visit(int i, bool as_operand) {
    const ExprNode& n = e_.nodes[i];
    const int k = arity(n.op);
    for (int a = 0; a < k; ++a)
      if (!valid_operand(i, n.args[a])) {
        out_ += "<bad node " + std::to_string(i) + ">";
        return;
      }
    const std::string_view open = as_operand ? "(" : "";
    const std::string_view close = as_operand ? ")" : "";

    if (n.op == Op::constant) {
      if (std::isnan(n.value)) {
        out_ += syntax::kNan;
      } else if (std::signbit(n.value)) {
        out_ += open;
        out_ += '-';
        append_magnitude(out_, -n.value);
        out_ += close;
      } else {
        append_magnitude(out_, n.value);
      }
    } else if (n.op == Op::input) {
      if (n.input >= 0 && static_cast<std::size_t>(n.input) < names_.size())
        out_ += names_[n.input];
      else
        out_ += "<input " + std::to_string(n.input) + ">";
    } else if (n.op == Op::neg) {
      later({text(open), text("-"), operand(n.args[0]), text(close)});
    } else if (std::string_view sym = syntax::infix_symbol(n.op); !sym.empty()) {
      later({text(open), operand(n.args[0]), text(" "), text(sym), text(" "), operand(n.args[1]),
             text(close)});
    } else if (std::string_view name = syntax::function_name(n.op); !name.empty()) {
      if (k == 1) later({text(name), text("("), argument(n.args[0]), text(")")});
      if (k == 2)
        later({text(name), text("("), argument(n.args[0]), text(", "), argument(n.args[1]),
               text(")")});
      if (k == 3)
        later({text(name), text("("), argument(n.args[0]), text(", "), argument(n.args[1]),
               text(", "), argument(n.args[2]), text(")")});
    } else {
      out_ += "<bad node " + std::to_string(i) + ">";
    }
  }

  const Expr& e_;
  const std::vector<std::string>& names_;
  std::vector<Item> todo_;
  std::string out_;
};

}  // namespace

std::string to_text(const Expr& e, const std::vector<std::string>& input_names) {
  return Writer(e, input_names).write();
}

}  // namespace kq
