// Recursive descent over the grammar in parser.hpp, one statement (one line) at a time. Each rule
// returns the index of the node it emitted last, so operands precede their users in
// Program::nodes. Binding, ranges and the order of assignments are checked while parsing, where
// the offending token's column is at hand.
#include "indexed/parser.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "expr/lexer.hpp"
#include "expr/syntax.hpp"
#include "indexed/names.hpp"
#include "indexed/nearest.hpp"

namespace kq::ix {
namespace {

using syntax::Tok;
using syntax::Token;

constexpr int kMaxDepth = 256;

// Unwinds to parse_program; `pos` is a byte offset in the current line.
struct Failure {
  std::size_t pos;
  std::string message;
};

// Which tensors have been assigned by the statements parsed so far.
struct Progress {
  std::vector<bool> assigned;      // by tensor
  std::vector<bool> extent_known;  // by index variable
};

class StatementParser {
 public:
  StatementParser(Program& p, Progress& progress, std::string_view line, int line_number)
      : p_(p), progress_(progress), line_(line), line_number_(line_number) {
    syntax::Lexer lexer(line, syntax::Grammar::statement);
    for (;;) {
      Token t = lexer.next();
      if (t.kind == Tok::error) throw Failure{t.pos, t.error};
      tokens_.push_back(t);
      if (t.kind == Tok::end) break;
    }
  }

  void parse() {
    Statement s;
    s.line = line_number_;
    s.text = std::string(line_);
    statement_ = static_cast<int>(p_.statements.size());
    parse_lhs(s);
    expect(Tok::assign, "'=' after the left-hand side");
    s.root = parse_compare();
    if (tok().kind != Tok::end) fail("unexpected " + found() + " after a complete expression");
    s.scan_index = scan_index_;
    progress_.assigned[static_cast<std::size_t>(s.tensor)] = true;
    p_.statements.push_back(std::move(s));
  }

 private:
  class Nesting {
   public:
    Nesting(StatementParser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth)
        p_.fail("the statement nests deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~Nesting() { --p_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    StatementParser& p_;
  };

  // One binding in scope: an index variable, and whether the left-hand side bound it.
  struct Bound {
    std::string name;
    int var;
    bool lhs;
  };

  const Token& tok() const { return tokens_[at_]; }
  const Token& peek(std::size_t k) const { return tokens_[std::min(at_ + k, tokens_.size() - 1)]; }
  void advance() {
    if (at_ + 1 < tokens_.size()) ++at_;
  }
  std::string spelled(const Token& t) const { return std::string(line_.substr(t.pos, t.len)); }
  std::string found() const { return describe(tok(), line_, syntax::Grammar::statement); }
  int column(std::size_t pos) const { return syntax::column_at(line_, pos); }
  [[noreturn]] void fail(std::string message) const {
    throw Failure{tok().pos, std::move(message)};
  }
  [[noreturn]] void fail_at(std::size_t pos, std::string message) const {
    throw Failure{pos, std::move(message)};
  }
  void expect(Tok kind, std::string_view what) {
    if (tok().kind != kind) fail("expected " + std::string(what) + " but found " + found());
    advance();
  }

  int emit(Node n) {
    p_.nodes.push_back(std::move(n));
    return static_cast<int>(p_.nodes.size()) - 1;
  }
  Node node(NodeKind kind, std::size_t pos) const {
    Node n;
    n.kind = kind;
    n.column = column(pos);
    return n;
  }

  // ---- names

  std::vector<std::string> known_names() const {
    std::vector<std::string> names;
    for (const TensorDecl& t : p_.decls.tensors) names.push_back(t.name);
    for (const ParamDecl& x : p_.decls.params) names.push_back(x.name);
    for (const DimDecl& d : p_.decls.dims) names.push_back(d.name);
    for (const Bound& b : scope_) names.push_back(b.name);
    return names;
  }

  std::string suggestion(const std::string& name) const {
    if (auto near = nearest_name(name, known_names())) return " (did you mean '" + *near + "'?)";
    return {};
  }

  bool is_declared(std::string_view name) const {
    return find_named(p_.decls.tensors, name) >= 0 || find_named(p_.decls.params, name) >= 0 ||
           find_named(p_.decls.dims, name) >= 0;
  }

  // A name that may be bound as an index variable: lower-case, not declared, not reserved.
  bool is_index_name(std::string_view name) const {
    return is_lower_name(name) && !is_declared(name) && !is_reserved(name);
  }

  const Bound* bound(std::string_view name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->name == name) return &*it;
    return nullptr;
  }

  std::string lhs_names() const {
    std::string s;
    for (const Bound& b : scope_)
      if (b.lhs) s += (s.empty() ? "" : ", ") + b.name;
    return s.empty() ? "none" : s;
  }

  // Checks a name about to be bound at `pos` and returns its new variable.
  int bind(const std::string& name, std::size_t pos, bool lhs, std::optional<Extent> extent) {
    if (!is_lower_name(name) || is_reserved(name))
      fail_at(pos, "'" + name + "' cannot be an index variable: indices are lower-case names" +
                       " that are not functions or reductions");
    if (is_declared(name))
      fail_at(pos, "'" + name + "' cannot be an index variable: it is a declared tensor, param" +
                       " or dim");
    if (const Bound* b = bound(name)) {
      if (b->lhs && !lhs)
        fail_at(pos, "reduction over '" + name + "', which the left-hand side binds: a" +
                         " reduction runs over its own indices");
      fail_at(pos, "index '" + name + "' is bound twice");
    }
    IndexVar v;
    v.name = name;
    v.statement = statement_;
    if (extent) v.extent = *extent;
    p_.indices.push_back(v);
    extent_known_.push_back(extent.has_value());
    const int var = static_cast<int>(p_.indices.size()) - 1;
    scope_.push_back({name, var, lhs});
    return var;
  }

  // ---- left-hand side

  void parse_lhs(Statement& s) {
    if (tok().kind != Tok::name) fail("a statement starts with the name of the tensor it assigns");
    const std::string name = spelled(tok());
    const std::size_t pos = tok().pos;
    s.tensor = find_named(p_.decls.tensors, name);
    if (s.tensor < 0) fail_at(pos, "unknown tensor '" + name + "'" + suggestion(name));
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(s.tensor)];
    if (t.role == Role::input)
      fail_at(pos, "'" + name + "' is an input: a statement assigns a temporary or an output");
    if (progress_.assigned[static_cast<std::size_t>(s.tensor)])
      fail_at(pos, "'" + name + "' is assigned twice: each tensor is assigned by one statement");
    advance();
    if (tok().kind == Tok::lbracket) {
      advance();
      for (;;) {
        if (tok().kind != Tok::name)
          fail("a left-hand side's subscripts are index names, found " + found());
        const std::size_t d = s.lhs.size();
        std::optional<Extent> extent;
        if (d < t.shape.size()) extent = t.shape[d];
        s.lhs.push_back(bind(spelled(tok()), tok().pos, true, extent));
        advance();
        if (tok().kind == Tok::rbracket) break;
        expect(Tok::comma, "',' or ']'");
      }
      advance();
    }
    if (s.lhs.size() != t.shape.size())
      fail_at(pos, "'" + name + "' has " + std::to_string(t.shape.size()) +
                       " dimension(s) but the left-hand side gives " +
                       std::to_string(s.lhs.size()) + " subscript(s)");
  }

  // ---- expressions

  int parse_compare() {
    const int lhs = parse_additive();
    const std::optional<Op> op = syntax::comparison(tok().kind);
    if (!op) return lhs;
    const std::size_t pos = tok().pos;
    advance();
    const int rhs = parse_additive();
    return apply(*op, pos, {lhs, rhs});
  }

  int apply(Op op, std::size_t pos, std::vector<int> args) {
    Node n = node(NodeKind::apply, pos);
    n.op = op;
    n.args = std::move(args);
    return emit(std::move(n));
  }

  int parse_additive() {
    int lhs = parse_term();
    while (tok().kind == Tok::plus || tok().kind == Tok::minus) {
      const Op op = tok().kind == Tok::plus ? Op::add : Op::sub;
      const std::size_t pos = tok().pos;
      advance();
      lhs = apply(op, pos, {lhs, parse_term()});
    }
    return lhs;
  }

  int parse_term() {
    int lhs = parse_unary();
    while (tok().kind == Tok::star || tok().kind == Tok::slash) {
      const Op op = tok().kind == Tok::star ? Op::mul : Op::div;
      const std::size_t pos = tok().pos;
      advance();
      lhs = apply(op, pos, {lhs, parse_unary()});
    }
    return lhs;
  }

  int parse_unary() {
    if (tok().kind != Tok::minus) return parse_primary();
    Nesting nesting(*this);
    const std::size_t pos = tok().pos;
    advance();
    return apply(Op::neg, pos, {parse_unary()});
  }

  int parse_primary() {
    switch (tok().kind) {
      case Tok::number: {
        Node n = node(NodeKind::number, tok().pos);
        n.value = tok().value;
        advance();
        return emit(std::move(n));
      }
      case Tok::lparen: {
        Nesting nesting(*this);
        const std::size_t open = tok().pos;
        advance();
        const int inner = parse_compare();
        if (tok().kind != Tok::rparen)
          fail("expected ')' to close '(' at column " + std::to_string(column(open)) +
               " but found " + found());
        advance();
        return inner;
      }
      case Tok::name:
        return parse_name();
      default:
        fail("expected a number, a name or '(' but found " + found());
    }
  }

  int parse_name() {
    const std::string name = spelled(tok());
    const std::size_t pos = tok().pos;
    const bool called = peek(1).kind == Tok::lparen;
    if (called) {
      if (auto k = keyword_named(name))
        return k->scan ? parse_scan(*k, pos) : parse_reduce(*k, pos);
      if ((name == "max" || name == "min") && reduction_follows()) {
        Keyword k{name, false, name == "max" ? Reduction::max : Reduction::min, ScanKind::cumsum};
        return parse_reduce(k, pos);
      }
    }
    if (auto op = syntax::function_named(name)) {
      if (!called) fail("'" + name + "' is a function: call it as " + name + "(...)");
      return parse_call(*op, name);
    }
    if (keyword_named(name))
      fail("'" + name + "' is a reduction or scan: call it as " + name + "(index, expr)");
    advance();
    if (called) fail_at(pos, "'" + name + "' is not a function");
    if (name == syntax::kInf || name == syntax::kNan) {
      Node n = node(NodeKind::number, pos);
      n.value = name == syntax::kInf ? std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN();
      return emit(std::move(n));
    }
    if (int t = find_named(p_.decls.tensors, name); t >= 0) return parse_access(t, pos);
    if (int x = find_named(p_.decls.params, name); x >= 0) return leaf(NodeKind::param, x, pos);
    if (int d = find_named(p_.decls.dims, name); d >= 0) return leaf(NodeKind::dim, d, pos);
    if (const Bound* b = bound(name)) return leaf(NodeKind::index, b->var, pos);
    if (subscript_depth_ > 0 && is_index_name(name))
      fail_at(pos, "index '" + name + "' is used but never bound (the left-hand side binds " +
                       lhs_names() + "; a reduction binds its own)");
    fail_at(pos, "unknown name '" + name + "'" + suggestion(name));
  }

  int leaf(NodeKind kind, int ref, std::size_t pos) {
    Node n = node(kind, pos);
    n.ref = ref;
    return emit(std::move(n));
  }

  // At `max(` or `min(`: whether the first argument is an index name or a parenthesised list of
  // them, followed by a comma; or a name with a range (`k : 3`), which only a reduction has.
  bool reduction_follows() const {
    std::size_t k = 2;
    if (peek(k).kind == Tok::name)
      return is_index_name(spelled(peek(k))) &&
             (peek(k + 1).kind == Tok::comma || peek(k + 1).kind == Tok::colon);
    if (peek(k).kind != Tok::lparen) return false;
    for (++k;; k += 2) {
      if (peek(k).kind != Tok::name || !is_index_name(spelled(peek(k)))) return false;
      if (peek(k + 1).kind == Tok::colon) return true;
      if (peek(k + 1).kind == Tok::rparen) return peek(k + 2).kind == Tok::comma;
      if (peek(k + 1).kind != Tok::comma) return false;
    }
  }

  int parse_call(Op op, const std::string& name) {
    const std::size_t name_pos = tok().pos;
    advance();  // the name
    Nesting nesting(*this);
    advance();  // '('
    std::vector<int> args;
    if (tok().kind != Tok::rparen) {
      for (;;) {
        args.push_back(parse_compare());
        if (tok().kind == Tok::rparen) break;
        expect(Tok::comma, "',' or ')' in the call of " + name);
      }
    }
    advance();
    if (args.size() != static_cast<std::size_t>(arity(op)))
      fail_at(name_pos, name + " takes " + std::to_string(arity(op)) + " argument(s), got " +
                            std::to_string(args.size()));
    return apply(op, name_pos, std::move(args));
  }

  // ---- reductions and scans

  // Binds the indices after `name(`: one name or a parenthesised list, each name with its range
  // where written (`p : 4`, `p : KH`: a window's index, in no subscript alone).
  std::vector<int> parse_over(const std::string& what) {
    struct Over {
      std::string name;
      std::size_t pos;
      std::optional<Extent> range;
    };
    std::vector<Over> names;
    auto one = [&] {
      if (tok().kind != Tok::name) fail(what + " runs over index names, found " + found());
      names.push_back({spelled(tok()), tok().pos, std::nullopt});
      advance();
      if (tok().kind != Tok::colon) return;
      advance();
      names.back().range = parse_range(names.back().name);
    };
    if (tok().kind == Tok::lparen) {
      advance();
      for (one(); tok().kind == Tok::comma; one()) advance();
      expect(Tok::rparen, "',' or ')' in the list of indices");
    } else {
      one();
    }
    std::vector<int> vars;
    for (const Over& o : names) {
      vars.push_back(bind(o.name, o.pos, false, o.range));
      p_.indices.back().ranged = o.range.has_value();
    }
    return vars;
  }

  // After `index :`: a dim's name or a positive integer, up to 2^40 as a dim's value is.
  Extent parse_range(const std::string& index) {
    const std::string what = "the range of '" + index + "' (a dim or an integer in [1, 2^40])";
    if (tok().kind == Tok::number) {
      const double v = tok().value;
      if (!(v >= 1 && v <= 0x1p40 && v == static_cast<double>(static_cast<std::int64_t>(v))))
        fail(what + " is " + found());
      advance();
      return Extent(static_cast<std::int64_t>(v));
    }
    if (tok().kind != Tok::name) fail(what + " is missing, found " + found());
    const std::string name = spelled(tok());
    const int d = find_named(p_.decls.dims, name);
    if (d < 0) fail(what + ": '" + name + "' is not a dim");
    advance();
    Extent e(name);
    e.dim = d;
    return e;
  }

  int parse_reduce(const Keyword& k, std::size_t pos) {
    const std::string name(k.name);
    advance();  // the name
    Nesting nesting(*this);
    advance();  // '('
    const std::size_t scope_size = scope_.size();
    Node n = node(NodeKind::reduce, pos);
    n.reduction = k.reduction;
    n.over = parse_over(name);
    expect(Tok::comma, "',' and the expression " + name + " reduces");
    ++reduce_depth_;
    n.args = {parse_compare()};
    --reduce_depth_;
    expect(Tok::rparen, "')' to close " + name + "(");
    for (int v : n.over)
      if (!extent_known_[static_cast<std::size_t>(v)])
        fail_at(pos, "the range of index '" + p_.indices[static_cast<std::size_t>(v)].name +
                         "' of " + name + " is unknown: use it alone as a subscript of a tensor");
    scope_.resize(scope_size);
    return emit(std::move(n));
  }

  int parse_scan(const Keyword& k, std::size_t pos) {
    const std::string name(k.name);
    if (reduce_depth_ > 0 || scan_depth_ > 0)
      fail(name + " inside a reduction or another scan is not supported");
    advance();  // the name
    Nesting nesting(*this);
    advance();  // '('
    if (tok().kind != Tok::name) fail(name + " runs along one index name, found " + found());
    const std::string index = spelled(tok());
    const Bound* b = bound(index);
    if (b == nullptr || !b->lhs)
      fail(name + " runs along an index the left-hand side binds (" + lhs_names() + "), not '" +
           index + "'");
    if (scan_index_ >= 0 && scan_index_ != b->var)
      fail("every scan of a statement runs along the same index");
    Node n = node(NodeKind::scan, pos);
    n.scan = k.scan_kind;
    n.over = {b->var};
    scan_index_ = b->var;
    advance();
    expect(Tok::comma, "',' and the expression " + name + " accumulates");
    ++scan_depth_;
    n.args = {parse_compare()};
    --scan_depth_;
    while (tok().kind == Tok::comma) {
      advance();
      const std::string flag = tok().kind == Tok::name ? spelled(tok()) : "";
      if (flag == "exclusive" && !n.exclusive && !n.reverse)
        n.exclusive = true;
      else if (flag == "reverse" && !n.reverse)
        n.reverse = true;
      else
        fail("expected 'exclusive' or 'reverse' (in that order, each once) but found " + found());
      advance();
    }
    expect(Tok::rparen, "')' to close " + name + "(");
    return emit(std::move(n));
  }

  // ---- accesses

  int parse_access(int tensor, std::size_t pos) {
    const TensorDecl& t = p_.decls.tensors[static_cast<std::size_t>(tensor)];
    if (t.role != Role::input && !progress_.assigned[static_cast<std::size_t>(tensor)])
      fail_at(pos, "'" + t.name + "' is used before it is assigned (a " +
                       std::string(to_string(t.role)) + " is read only by later statements)");
    Node n = node(NodeKind::access, pos);
    n.ref = tensor;
    std::vector<std::size_t> positions;
    if (tok().kind == Tok::lbracket) {
      Nesting nesting(*this);
      advance();
      ++subscript_depth_;
      for (;;) {
        positions.push_back(tok().pos);
        n.args.push_back(parse_additive());
        if (tok().kind == Tok::rbracket) break;
        expect(Tok::comma, "',' or ']' in the subscripts of " + t.name);
      }
      --subscript_depth_;
      advance();
    }
    if (n.args.size() != t.shape.size())
      fail_at(pos, "'" + t.name + "' has " + std::to_string(t.shape.size()) +
                       " dimension(s) but is accessed with " + std::to_string(n.args.size()) +
                       " subscript(s)");
    for (std::size_t d = 0; d < n.args.size(); ++d) check_subscript(t, d, n.args[d], positions[d]);
    return emit(std::move(n));
  }

  // A subscript is an index expression, or one divided by a positive integer constant as a
  // whole (`(t + 1 - 2 * k) / 2`: a position only where the division is exact); a bare index
  // variable must range over the dimension.
  void check_subscript(const TensorDecl& t, std::size_t d, int sub, std::size_t pos) {
    const Node& s = p_.nodes[static_cast<std::size_t>(sub)];
    if (s.kind == NodeKind::apply && s.op == Op::div) {
      const Node& by = p_.nodes[static_cast<std::size_t>(s.args[1])];
      if (by.kind != NodeKind::number || !(by.value >= 1 && by.value <= 1073741824.0) ||
          std::trunc(by.value) != by.value)
        fail_at(by.column > 0 ? byte_of_column(by.column) : pos,
                "a subscript divides by a positive integer constant (at most 2^30), found " +
                    (by.kind == NodeKind::number ? std::to_string(by.value) : "an expression"));
      check_index_expr(s.args[0], pos);
      return;
    }
    check_index_expr(sub, pos);
    if (s.kind != NodeKind::index) return;
    const auto var = static_cast<std::size_t>(s.ref);
    IndexVar& v = p_.indices[var];
    if (!extent_known_[var]) {
      v.extent = t.shape[d];
      extent_known_[var] = true;
      return;
    }
    if (!(v.extent == t.shape[d]))
      fail_at(pos, "index '" + v.name + "' ranges over " + extent_text(v.extent) +
                       " but dimension " + std::to_string(d + 1) + " of '" + t.name +
                       "' has extent " + extent_text(t.shape[d]) +
                       " (write index arithmetic, e.g. '" + v.name + " + 0', to mean it)");
  }

  void check_index_expr(int i, std::size_t pos) const {
    const Node& n = p_.nodes[static_cast<std::size_t>(i)];
    const std::size_t at = n.column > 0 ? byte_of_column(n.column) : pos;
    switch (n.kind) {
      case NodeKind::index:
      case NodeKind::dim:
        return;
      case NodeKind::number:
        // Checked before any cast: NaN, infinities and values beyond 2^53 are no subscript.
        if (!(std::fabs(n.value) <= 9007199254740992.0) || std::trunc(n.value) != n.value)
          fail_at(at, "a subscript's constants are integers, found " + std::to_string(n.value));
        return;
      case NodeKind::access: {
        const TensorDecl& g = p_.decls.tensors[static_cast<std::size_t>(n.ref)];
        if (!is_integer(g.dtype))
          fail_at(at, "gather through '" + g.name + "', a " + std::string(to_string(g.dtype)) +
                          " tensor: subscripts read integer tensors only (i32, i64, bool)");
        return;
      }
      case NodeKind::apply:
        if (n.op == Op::add || n.op == Op::sub || n.op == Op::mul || n.op == Op::neg) {
          for (int a : n.args) check_index_expr(a, pos);
          return;
        }
        break;
      default:
        break;
    }
    fail_at(at, "a subscript is an index expression (index variables, integer constants, dims," +
                    std::string(" + - * and gathers through integer tensors), or one divided by ") +
                    "a positive integer constant as a whole: (e) / S");
  }

  std::size_t byte_of_column(int col) const {
    std::size_t pos = 0;
    for (int c = 1; pos < line_.size(); ++pos) {
      if ((static_cast<unsigned char>(line_[pos]) & 0xC0) == 0x80) continue;
      if (c++ == col) return pos;
    }
    return pos;
  }

  Program& p_;
  Progress& progress_;
  std::string_view line_;
  int line_number_;
  int statement_ = 0;
  std::vector<Token> tokens_;
  std::size_t at_ = 0;
  std::vector<Bound> scope_;
  std::vector<bool>& extent_known_ = progress_.extent_known;
  int depth_ = 0;
  int reduce_depth_ = 0;
  int scan_depth_ = 0;
  int subscript_depth_ = 0;
  int scan_index_ = -1;
};

}  // namespace

namespace {

// The line without its comment, if any.
std::string_view strip_comment(std::string_view line) {
  const std::size_t hash = line.find('#');
  return hash == std::string_view::npos ? line : line.substr(0, hash);
}

bool is_blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

std::string ParseError::text() const {
  std::string s = std::to_string(line) + ":" + std::to_string(column) + ": " + message;
  if (!statement.empty()) s += " (in `" + statement + "`)";
  return s;
}

ParseResult parse_program(std::string_view text, const Declarations& decls) {
  ParseResult result;
  Program p;
  p.decls = decls;
  if (auto problem = declaration_problem(p.decls)) {
    result.error = ParseError{0, 0, "in the declarations: " + *problem, ""};
    return result;
  }
  Progress progress;
  progress.assigned.assign(p.decls.tensors.size(), false);
  int line_number = 0;
  std::size_t start = 0;
  std::string_view last_line;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = strip_comment(text.substr(start, end - start));
    ++line_number;
    start = end + 1;
    if (is_blank(line)) continue;
    last_line = line;
    try {
      StatementParser(p, progress, line, line_number).parse();
    } catch (const Failure& f) {
      result.error =
          ParseError{line_number, syntax::column_at(line, f.pos), f.message, std::string(line)};
      return result;
    }
  }
  if (p.statements.empty()) {
    result.error = ParseError{1, 1, "the program has no statements", ""};
    return result;
  }
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (p.decls.tensors[t].role == Role::output && !progress.assigned[t]) {
      const Statement& last = p.statements.back();
      result.error =
          ParseError{last.line, syntax::column_at(last_line, last_line.size()) + 1,
                     "output '" + p.decls.tensors[t].name + "' is never assigned", last.text};
      return result;
    }
  result.program = std::move(p);
  return result;
}

}  // namespace kq::ix
