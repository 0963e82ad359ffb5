// Recursive descent over the grammar in parser.hpp, one function per rule. Each rule returns the
// index of the node it emitted last (its subtree's root); operands are parsed, and so emitted,
// before the node that uses them, which gives the post-order list kq::Expr requires.
//
// Name lookup order: function, then the constants inf and nan, then the inputs. An input named
// like a function or constant can therefore never be referenced; the error for such a name says so.
#include "expr/parser.hpp"

#include <limits>

#include "expr/lexer.hpp"
#include "expr/syntax.hpp"

namespace kq {
namespace {

using syntax::Tok;
using syntax::Token;

// Deeper nesting is refused rather than risking the stack on hostile text. Chains such as
// a + b + c are loops, not recursion, and have no limit.
constexpr int kMaxDepth = 256;

// Unwinds the parse to parse_expr, which turns it into an ExprParseError.
struct Failure {
  std::size_t pos;
  std::string message;
};

std::string comma_list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string plural(std::size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

class Parser {
 public:
  Parser(std::string_view text, const std::vector<std::string>& inputs)
      : text_(text), inputs_(inputs), lexer_(text) {}

  std::vector<ExprNode> parse() {
    advance();
    if (tok_.kind == Tok::end) throw Failure{0, "empty expression"};
    parse_compare();
    if (tok_.kind != Tok::end) fail_at_top_level();
    return std::move(nodes_);
  }

 private:
  class Nesting {
   public:
    Nesting(Parser& p, std::size_t pos) : p_(p) {
      if (++p_.depth_ > kMaxDepth)
        throw Failure{pos, "expression nests deeper than " + std::to_string(kMaxDepth) + " levels"};
    }
    ~Nesting() { --p_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };

  void advance() {
    tok_ = lexer_.next();
    if (tok_.kind == Tok::error) throw Failure{tok_.pos, tok_.error};
  }

  std::string_view spelled(const Token& t) const { return text_.substr(t.pos, t.len); }
  std::string found() const { return syntax::describe(tok_, text_); }
  int column(std::size_t pos) const { return syntax::column_at(text_, pos); }

  int emit(Op op, int a = -1, int b = -1, int c = -1) {
    ExprNode n;
    n.op = op;
    n.args[0] = a;
    n.args[1] = b;
    n.args[2] = c;
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }

  int parse_compare() {
    const int lhs = parse_additive();
    const std::optional<Op> op = syntax::comparison(tok_.kind);
    if (!op) return lhs;
    advance();
    const int rhs = parse_additive();
    return emit(*op, lhs, rhs);
  }

  int parse_additive() {
    int lhs = parse_term();
    while (tok_.kind == Tok::plus || tok_.kind == Tok::minus) {
      const Op op = tok_.kind == Tok::plus ? Op::add : Op::sub;
      advance();
      const int rhs = parse_term();
      lhs = emit(op, lhs, rhs);
    }
    return lhs;
  }

  int parse_term() {
    int lhs = parse_unary();
    while (tok_.kind == Tok::star || tok_.kind == Tok::slash) {
      const Op op = tok_.kind == Tok::star ? Op::mul : Op::div;
      advance();
      const int rhs = parse_unary();
      lhs = emit(op, lhs, rhs);
    }
    return lhs;
  }

  int parse_unary() {
    if (tok_.kind != Tok::minus) return parse_primary();
    Nesting nesting(*this, tok_.pos);
    advance();
    const int operand = parse_unary();
    return emit(Op::neg, operand);
  }

  int parse_primary() {
    switch (tok_.kind) {
      case Tok::number: {
        const int i = emit(Op::constant);
        nodes_[i].value = tok_.value;
        advance();
        return i;
      }
      case Tok::name:
        return parse_name();
      case Tok::lparen: {
        Nesting nesting(*this, tok_.pos);
        const std::size_t open = tok_.pos;
        advance();
        const int inner = parse_compare();
        if (tok_.kind != Tok::rparen) fail_in_parentheses(open);
        advance();
        return inner;
      }
      case Tok::end:
        throw Failure{tok_.pos,
                      "unexpected end of the expression: expected a number, a name or '('"};
      default:
        throw Failure{tok_.pos, "expected a number, a name or '(' but found " + found()};
    }
  }

  int parse_name() {
    const std::string name(spelled(tok_));
    const std::size_t pos = tok_.pos;
    advance();
    const bool called = tok_.kind == Tok::lparen;

    if (auto op = syntax::function_named(name)) {
      if (!called)
        throw Failure{pos, "'" + name + "' is a function: call it as " + name + "(...) with " +
                               plural(arity(*op), "argument") + shadowed_input_note(name)};
      return parse_call(*op, name, pos);
    }
    if (name == syntax::kInf || name == syntax::kNan) {
      if (called) throw Failure{pos, "'" + name + "' is a constant, not a function"};
      const int i = emit(Op::constant);
      nodes_[i].value = name == syntax::kInf ? std::numeric_limits<double>::infinity()
                                             : std::numeric_limits<double>::quiet_NaN();
      return i;
    }
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      if (inputs_[k] != name) continue;
      if (called) throw Failure{pos, "'" + name + "' is an input, not a function"};
      const int i = emit(Op::input);
      nodes_[i].input = static_cast<int>(k);
      return i;
    }
    throw Failure{pos, "unknown name '" + name + "': it is neither an input (" +
                           (inputs_.empty() ? std::string("there are no inputs")
                                            : "inputs: " + comma_list(inputs_)) +
                           ") nor a function"};
  }

  // Arguments are counted after they are all parsed, so the message can say how many there were.
  int parse_call(Op op, const std::string& name, std::size_t name_pos) {
    Nesting nesting(*this, tok_.pos);
    const std::size_t open = tok_.pos;
    advance();
    int args[3] = {-1, -1, -1};
    std::size_t count = 0;
    if (tok_.kind != Tok::rparen) {
      for (;;) {
        const int arg = parse_compare();
        if (count < 3) args[count] = arg;
        ++count;
        if (tok_.kind == Tok::rparen) break;
        if (tok_.kind != Tok::comma) fail_in_call(name, open, count);
        advance();
      }
    }
    advance();
    const auto want = static_cast<std::size_t>(arity(op));
    if (count != want)
      throw Failure{name_pos,
                    name + " takes " + plural(want, "argument") + ", got " + std::to_string(count)};
    return emit(op, args[0], args[1], args[2]);
  }

  std::string shadowed_input_note(const std::string& name) const {
    for (const std::string& input : inputs_)
      if (input == name)
        return " (the input named '" + name +
               "' cannot be referenced: function names take precedence over inputs)";
    return {};
  }

  // The failures below all happen where an operand is complete and something else follows it.
  void fail_if_chained_comparison() const {
    if (syntax::comparison(tok_.kind))
      throw Failure{tok_.pos, "comparisons do not chain: parenthesise one side, e.g. (a < b) < c"};
  }

  [[noreturn]] void fail_at_top_level() const {
    fail_if_chained_comparison();
    if (tok_.kind == Tok::rparen) throw Failure{tok_.pos, "unmatched ')'"};
    if (tok_.kind == Tok::comma) throw Failure{tok_.pos, "',' outside a function call"};
    throw Failure{tok_.pos, "unexpected " + found() + " after a complete expression"};
  }

  [[noreturn]] void fail_in_parentheses(std::size_t open) const {
    fail_if_chained_comparison();
    const std::string where = "'(' at column " + std::to_string(column(open));
    if (tok_.kind == Tok::end) throw Failure{tok_.pos, "missing ')' to close " + where};
    throw Failure{tok_.pos, "expected ')' to close " + where + " but found " + found()};
  }

  [[noreturn]] void fail_in_call(const std::string& name, std::size_t open,
                                 std::size_t argument) const {
    fail_if_chained_comparison();
    const std::string where = "'" + name + "(' at column " + std::to_string(column(open));
    if (tok_.kind == Tok::end) throw Failure{tok_.pos, "missing ')' to close " + where};
    throw Failure{tok_.pos, "expected ',' or ')' after argument " + std::to_string(argument) +
                                " of " + name + " but found " + found()};
  }

  std::string_view text_;
  const std::vector<std::string>& inputs_;
  syntax::Lexer lexer_;
  Token tok_;
  std::vector<ExprNode> nodes_;
  int depth_ = 0;
};

}  // namespace

ExprParseResult parse_expr(std::string_view text, const std::vector<std::string>& input_names) {
  ExprParseResult result;
  try {
    Parser parser(text, input_names);
    Expr e;
    e.nodes = parser.parse();
    e.text = std::string(text);
    result.expr = std::move(e);
  } catch (const Failure& f) {
    result.error = ExprParseError{syntax::column_at(text, f.pos), f.message};
  }
  return result;
}

}  // namespace kq
