#include "expr/lexer.hpp"

#include <charconv>
#include <cstdio>
#include <system_error>

namespace kq::syntax {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The byte length of the UTF-8 character that starts with `lead` (1 for a stray byte), so that a
// message quotes a whole character.
std::size_t utf8_length(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

Token make(Tok kind, std::size_t pos, std::size_t len) {
  Token t;
  t.kind = kind;
  t.pos = pos;
  t.len = len;
  return t;
}

Token fail(std::size_t pos, std::size_t len, std::string message) {
  Token t = make(Tok::error, pos, len);
  t.error = std::move(message);
  return t;
}

}  // namespace

Token Lexer::next() {
  while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  if (pos_ >= text_.size()) return make(Tok::end, text_.size(), 0);

  const std::size_t start = pos_;
  const char c = text_[start];
  const char c1 = start + 1 < text_.size() ? text_[start + 1] : '\0';

  if (is_digit(c) || (c == '.' && is_digit(c1))) return number(start);
  if (is_alpha(c)) {
    std::size_t end = start + 1;
    while (end < text_.size() && (is_alpha(text_[end]) || is_digit(text_[end]))) ++end;
    pos_ = end;
    return make(Tok::name, start, end - start);
  }

  auto one = [&](Tok kind) {
    pos_ = start + 1;
    return make(kind, start, 1);
  };
  auto two = [&](Tok kind) {
    pos_ = start + 2;
    return make(kind, start, 2);
  };
  const bool statement = grammar_ == Grammar::statement;
  switch (c) {
    case '(':
      return one(Tok::lparen);
    case ')':
      return one(Tok::rparen);
    case '[':
      return statement ? one(Tok::lbracket) : unexpected(start);
    case ']':
      return statement ? one(Tok::rbracket) : unexpected(start);
    case ':':
      return statement ? one(Tok::colon) : unexpected(start);
    case ',':
      return one(Tok::comma);
    case '+':
      return one(Tok::plus);
    case '-':
      return one(Tok::minus);
    case '*':
      return one(Tok::star);
    case '/':
      return one(Tok::slash);
    case '<':
      return c1 == '=' ? two(Tok::le) : one(Tok::lt);
    case '>':
      return c1 == '=' ? two(Tok::ge) : one(Tok::gt);
    case '=':
      if (c1 == '=') return two(Tok::eq);
      if (statement) return one(Tok::assign);
      return fail(start, 1, "unexpected character '=' (equality is written '==')");
    case '!':
      if (c1 == '=') return two(Tok::ne);
      return fail(start, 1, "unexpected character '!' (inequality is written '!=')");
    default:
      return unexpected(start);
  }
}

// A number is the longest run that could belong to one (digits, letters, dots, and a sign right
// after an exponent marker), converted as a whole: "1.2.3" or "2x" is one malformed number rather
// than a number followed by something confusing.
Token Lexer::number(std::size_t start) {
  std::size_t end = start;
  while (end < text_.size()) {
    const char ch = text_[end];
    const bool sign_of_exponent =
        (ch == '+' || ch == '-') && end > start && (text_[end - 1] == 'e' || text_[end - 1] == 'E');
    if (!(is_digit(ch) || is_alpha(ch) || ch == '.' || sign_of_exponent)) break;
    ++end;
  }
  pos_ = end;
  const std::string_view run = text_.substr(start, end - start);
  Token t = make(Tok::number, start, run.size());
  // from_chars is locale-independent, unlike strtod.
  auto [ptr, ec] =
      std::from_chars(run.data(), run.data() + run.size(), t.value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range)
    return fail(
        start, run.size(),
        "number '" + std::string(run) + "' is outside the float64 range (write inf for infinity)");
  if (ec != std::errc() || ptr != run.data() + run.size())
    return fail(start, run.size(), "malformed number '" + std::string(run) + "'");
  return t;
}

Token Lexer::unexpected(std::size_t start) const {
  const auto lead = static_cast<unsigned char>(text_[start]);
  if (lead < 0x20 || lead == 0x7F) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", lead);
    return fail(start, 1, std::string("unexpected control character ") + hex);
  }
  std::size_t len = utf8_length(lead);
  if (start + len > text_.size()) len = text_.size() - start;
  return fail(start, len, "unexpected character '" + std::string(text_.substr(start, len)) + "'");
}

std::optional<Op> comparison(Tok t) {
  switch (t) {
    case Tok::lt:
      return Op::lt;
    case Tok::le:
      return Op::le;
    case Tok::gt:
      return Op::gt;
    case Tok::ge:
      return Op::ge;
    case Tok::eq:
      return Op::eq;
    case Tok::ne:
      return Op::ne;
    default:
      return std::nullopt;
  }
}

int column_at(std::string_view text, std::size_t pos) {
  int column = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  if (pos > text.size()) column += static_cast<int>(pos - text.size());
  return column;
}

std::string describe(const Token& t, std::string_view text, Grammar grammar) {
  const std::string spelled(text.substr(t.pos, t.len));
  switch (t.kind) {
    case Tok::end:
      return grammar == Grammar::statement ? "the end of the line" : "the end of the expression";
    case Tok::number:
      return "number '" + spelled + "'";
    default:
      return "'" + spelled + "'";
  }
}

}  // namespace kq::syntax
