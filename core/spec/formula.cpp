// Recursive descent over the formula grammar, on the expression language's tokens:
//   additive := term (('+' | '-') term)*      term := unary (('*' | '/') unary)*
//   unary := '-' unary | primary               primary := number | name | '(' additive ')'
//                                                        | function '(' additive (',' additive)*
//                                                        ')'
#include "spec/formula.hpp"

#include <algorithm>
#include <cmath>

#include "expr/lexer.hpp"
#include "spec/suggest.hpp"

namespace kq {
namespace {

using syntax::Tok;
using syntax::Token;

constexpr int kMaxDepth = 64;

struct Failure {
  std::size_t pos;
  std::string message;
};

struct Function {
  std::string_view name;
  Formula::Kind kind;
  int arity;
};
constexpr Function kFunctions[] = {{"sqrt", Formula::Kind::sqrt, 1},
                                   {"log2", Formula::Kind::log2, 1},
                                   {"max", Formula::Kind::max, 2},
                                   {"min", Formula::Kind::min, 2}};

class FormulaParser {
 public:
  FormulaParser(std::string_view text, const std::vector<std::string>& dims,
                const std::vector<std::string>& params)
      : text_(text), dims_(dims), params_(params), lexer_(text) {
    advance();
  }

  Formula parse() {
    if (tok_.kind == Tok::end) fail("the formula is empty");
    parse_additive();
    if (tok_.kind != Tok::end) fail("unexpected " + syntax::describe(tok_, text_));
    f_.text = std::string(text_);
    return std::move(f_);
  }

 private:
  [[noreturn]] void fail(std::string message) const { throw Failure{tok_.pos, std::move(message)}; }

  void advance() {
    tok_ = lexer_.next();
    if (tok_.kind == Tok::error) throw Failure{tok_.pos, tok_.error};
  }

  int emit(Formula::Node n) {
    f_.nodes.push_back(n);
    return static_cast<int>(f_.nodes.size()) - 1;
  }

  int binary(Formula::Kind kind, int a, int b) { return emit({kind, 0.0, -1, a, b}); }

  int parse_additive() {
    int left = parse_term();
    while (tok_.kind == Tok::plus || tok_.kind == Tok::minus) {
      const auto kind = tok_.kind == Tok::plus ? Formula::Kind::add : Formula::Kind::sub;
      advance();
      left = binary(kind, left, parse_term());
    }
    return left;
  }

  int parse_term() {
    int left = parse_unary();
    while (tok_.kind == Tok::star || tok_.kind == Tok::slash) {
      const auto kind = tok_.kind == Tok::star ? Formula::Kind::mul : Formula::Kind::div;
      advance();
      left = binary(kind, left, parse_unary());
    }
    return left;
  }

  int parse_unary() {
    if (++depth_ > kMaxDepth) fail("the formula nests deeper than 64 levels");
    int n = 0;
    if (tok_.kind == Tok::minus) {
      advance();
      n = binary(Formula::Kind::neg, parse_unary(), -1);
    } else {
      n = parse_primary();
    }
    --depth_;
    return n;
  }

  int parse_primary() {
    if (tok_.kind == Tok::number) {
      const double v = tok_.value;
      advance();
      return emit({Formula::Kind::number, v, -1, -1, -1});
    }
    if (tok_.kind == Tok::lparen) {
      advance();
      const int n = parse_additive();
      expect(Tok::rparen, "')'");
      return n;
    }
    if (tok_.kind != Tok::name) {
      fail("expected a number, a name or '(' but found " + syntax::describe(tok_, text_));
    }
    const std::string name(text_.substr(tok_.pos, tok_.len));
    for (const Function& fn : kFunctions) {
      if (fn.name == name) return parse_call(fn);
    }
    const int n = name_node(name);
    advance();
    return n;
  }

  int parse_call(const Function& fn) {
    advance();
    expect(Tok::lparen, "'(' after " + std::string(fn.name));
    const int a = parse_additive();
    int b = -1;
    if (fn.arity == 2) {
      expect(Tok::comma, "',' and a second argument of " + std::string(fn.name));
      b = parse_additive();
    }
    expect(Tok::rparen, "')' closing " + std::string(fn.name) + "(...)");
    return binary(fn.kind, a, b);
  }

  int name_node(const std::string& name) {
    if (auto d = std::find(dims_.begin(), dims_.end(), name); d != dims_.end())
      return emit({Formula::Kind::dim, 0.0, static_cast<int>(d - dims_.begin()), -1, -1});
    if (auto p = std::find(params_.begin(), params_.end(), name); p != params_.end())
      return emit({Formula::Kind::param, 0.0, static_cast<int>(p - params_.begin()), -1, -1});
    if (name == "u") return emit({Formula::Kind::u, 0.0, -1, -1, -1});
    // u first: a one-letter typo of it is likelier than of a one-letter dim.
    std::vector<std::string_view> known{"u"};
    known.insert(known.end(), params_.begin(), params_.end());
    known.insert(known.end(), dims_.begin(), dims_.end());
    for (const Function& fn : kFunctions) known.push_back(fn.name);
    std::string message = "unknown name '" + name + "'";
    if (auto near = closest_match(name, known)) message += " (did you mean '" + *near + "'?)";
    fail(message +
         "; a formula uses the dims, the params, u, numbers, + - * /, sqrt, log2, max "
         "and min");
  }

  void expect(Tok kind, const std::string& what) {
    if (tok_.kind != kind) fail("expected " + what + " but found " + syntax::describe(tok_, text_));
    advance();
  }

  std::string_view text_;
  const std::vector<std::string>& dims_;
  const std::vector<std::string>& params_;
  syntax::Lexer lexer_;
  Token tok_;
  Formula f_;
  int depth_ = 0;
};

}  // namespace

FormulaParse parse_formula(std::string_view text, const std::vector<std::string>& dims,
                           const std::vector<std::string>& params) {
  FormulaParse result;
  try {
    result.formula = FormulaParser(text, dims, params).parse();
  } catch (const Failure& f) {
    result.error = FormulaError{syntax::column_at(text, f.pos), f.message};
  }
  return result;
}

double evaluate(const Formula& f, std::span<const std::int64_t> dims,
                std::span<const double> params, double u) {
  std::vector<double> v(f.nodes.size());
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    const Formula::Node& n = f.nodes[i];
    const double a = n.a >= 0 ? v[static_cast<std::size_t>(n.a)] : 0.0;
    const double b = n.b >= 0 ? v[static_cast<std::size_t>(n.b)] : 0.0;
    using K = Formula::Kind;
    switch (n.kind) {
      case K::number:
        v[i] = n.value;
        break;
      case K::dim:
        v[i] = static_cast<double>(dims[static_cast<std::size_t>(n.ref)]);
        break;
      case K::param:
        v[i] = params[static_cast<std::size_t>(n.ref)];
        break;
      case K::u:
        v[i] = u;
        break;
      case K::neg:
        v[i] = -a;
        break;
      case K::add:
        v[i] = a + b;
        break;
      case K::sub:
        v[i] = a - b;
        break;
      case K::mul:
        v[i] = a * b;
        break;
      case K::div:
        v[i] = a / b;
        break;
      case K::sqrt:
        v[i] = std::sqrt(a);
        break;
      case K::log2:
        v[i] = std::log2(a);
        break;
      case K::max:
        v[i] = std::max(a, b);
        break;
      case K::min:
        v[i] = std::min(a, b);
        break;
    }
  }
  return v.empty() ? 0.0 : v.back();
}

}  // namespace kq
