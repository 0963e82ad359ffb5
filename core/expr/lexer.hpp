// Tokens of the expression language, produced one at a time so that the parser reports the
// leftmost problem in the text, whether it is lexical or grammatical. Format 2's statement lines
// (core/indexed) are lexed by the same code, with '[', ']', ':' and '=' besides.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kq/expr.hpp"

namespace kq::syntax {

enum class Tok {
  number,
  name,
  lparen,
  rparen,
  lbracket,  // statement lines only, as colon and assign
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
  std::size_t pos = 0;  // byte offset of the first character in the text
  std::size_t len = 0;  // bytes
  double value = 0.0;   // number
  std::string error;    // error
};

// What the text is: a format-1 expression, or a format-2 statement line (subscripts, index
// lists and the assignment).
enum class Grammar { expression, statement };

class Lexer {
 public:
  explicit Lexer(std::string_view text, Grammar grammar = Grammar::expression)
      : text_(text), grammar_(grammar) {}
  // The next token; after `end` it keeps returning `end`. The parser stops at the first `error`.
  Token next();

 private:
  Token number(std::size_t start);
  Token unexpected(std::size_t start) const;

  std::string_view text_;
  Grammar grammar_;
  std::size_t pos_ = 0;
};

// The 1-based column of byte offset `pos`, counting UTF-8 characters, not bytes, as an editor does.
int column_at(std::string_view text, std::size_t pos);

// How a token is named in messages: "'+'", "'foo'", "number '1.5'", "the end of the expression"
// (of a statement: "the end of the line").
std::string describe(const Token& t, std::string_view text, Grammar grammar = Grammar::expression);

// The comparison a token spells ('<' is Op::lt ...), or nothing.
std::optional<Op> comparison(Tok t);

}  // namespace kq::syntax
