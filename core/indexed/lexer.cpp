#include "indexed/lexer.hpp"

#include <charconv>
#include <system_error>

namespace kq::ix {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

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
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r'))
    ++pos_;
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
  auto sized = [&](Tok kind, std::size_t len) {
    pos_ = start + len;
    return make(kind, start, len);
  };
  switch (c) {
    case '(':
      return sized(Tok::lparen, 1);
    case ')':
      return sized(Tok::rparen, 1);
    case '[':
      return sized(Tok::lbracket, 1);
    case ']':
      return sized(Tok::rbracket, 1);
    case ',':
      return sized(Tok::comma, 1);
    case ':':
      return sized(Tok::colon, 1);
    case '+':
      return sized(Tok::plus, 1);
    case '-':
      return sized(Tok::minus, 1);
    case '*':
      return sized(Tok::star, 1);
    case '/':
      return sized(Tok::slash, 1);
    case '<':
      return c1 == '=' ? sized(Tok::le, 2) : sized(Tok::lt, 1);
    case '>':
      return c1 == '=' ? sized(Tok::ge, 2) : sized(Tok::gt, 1);
    case '=':
      return c1 == '=' ? sized(Tok::eq, 2) : sized(Tok::assign, 1);
    case '!':
      if (c1 == '=') return sized(Tok::ne, 2);
      return fail(start, 1, "unexpected character '!' (inequality is written '!=')");
    default:
      return fail(start, 1, "unexpected character '" + std::string(1, c) + "'");
  }
}

// As the expression lexer: the longest run that could belong to a number, converted as a whole.
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
  auto [ptr, ec] =
      std::from_chars(run.data(), run.data() + run.size(), t.value, std::chars_format::general);
  if (ec != std::errc() || ptr != run.data() + run.size())
    return fail(start, run.size(), "malformed number '" + std::string(run) + "'");
  return t;
}

std::string describe(const Token& t, std::string_view line) {
  const std::string spelled(line.substr(t.pos, t.len));
  switch (t.kind) {
    case Tok::end:
      return "the end of the line";
    case Tok::number:
      return "number '" + spelled + "'";
    default:
      return "'" + spelled + "'";
  }
}

}  // namespace kq::ix
