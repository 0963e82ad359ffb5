// The statements language: text -> kq::ix::Program. The grammar (docs/indexed-statements.md
// has the whole language):
//
//   program   := line ('\n' line)*             blank lines and '#' comments are skipped
//   statement := name ('[' index (',' index)* ']')? '=' expr
//   expr      := additive (('<' | '<=' | '>' | '>=' | '==' | '!=') additive)?
//   additive  := term (('+' | '-') term)*
//   term      := unary (('*' | '/') unary)*
//   unary     := '-' unary | primary
//   primary   := number | '(' expr ')' | name | name '[' sub (',' sub)* ']'
//              | function '(' expr (',' expr)* ')'
//              | reduction '(' over ',' expr ')'
//              | scan '(' index ',' expr (',' 'exclusive')? (',' 'reverse')? ')'
//   over      := range | '(' range (',' range)* ')'
//   range     := index (':' (dim | integer))?       a window's index writes its range
//   reduction := sum | prod | max | min | argmax | argmin
//   scan      := cumsum | cumprod
//   sub       := an additive expression of index variables, integer constants, dims, + - * and
//                gathers (accesses to integer tensors)
// Name lookup: reductions and scans, the functions of core/expr/syntax.hpp, inf and nan, then the
// declared tensors, params and dims, then the index variables in scope. max and min are
// reductions when their first argument is an index name (a lower-case name that is not declared)
// or a parenthesised list of them, and the binary functions otherwise.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "kq/indexed.hpp"

namespace kq::ix {

struct ParseError {
  int line = 0;    // 1-based; 0 for a problem in the declarations
  int column = 0;  // 1-based, counting characters
  std::string message;
  std::string statement;  // the offending statement's text, when there is one

  // "3:14: message (in `statement`)"
  std::string text() const;
};

struct ParseResult {
  std::optional<Program> program;
  std::optional<ParseError> error;
};

// Never throws for bad text or bad declarations: every problem is a ParseError.
ParseResult parse_program(std::string_view text, const Declarations& decls);

}  // namespace kq::ix
