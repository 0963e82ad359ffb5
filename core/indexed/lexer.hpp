// Tokens of one statement line: the expression language's tokens plus '[', ']' and '='.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kq::ix {

enum class Tok {
  number,
  name,
  lparen,
  rparen,
  lbracket,
  rbracket,
  comma,
  colon,
  assign,
  plus,
  minus,
  star,
  slash,
  lt,
  le,
  gt,
  ge,
  eq,
  ne,
  end,
  error,  // Token::error says what is wrong at Token::pos
};

struct Token {
  Tok kind = Tok::end;
  std::size_t pos = 0;  // byte offset in the line
  std::size_t len = 0;
  double value = 0.0;  // number
  std::string error;   // error
};

class Lexer {
 public:
  explicit Lexer(std::string_view line) : text_(line) {}
  Token next();  // after `end` it keeps returning `end`

 private:
  Token number(std::size_t start);

  std::string_view text_;
  std::size_t pos_ = 0;
};

// How a token is named in messages: "'+'", "'foo'", "number '1.5'", "the end of the line".
std::string describe(const Token& t, std::string_view line);

}  // namespace kq::ix
