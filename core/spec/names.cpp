#include <array>

#include "spec/sections.hpp"

namespace kq::spec_detail {

bool is_identifier(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_reserved_name(std::string_view s) {
  // The functions and named constants of core/expr/parser.hpp's grammar: an input named like
  // one of them could never be referred to.
  static constexpr std::array<std::string_view, 16> kReserved = {
      "relu", "abs",  "exp", "log", "sqrt",   "tanh",  "sigmoid", "erf",
      "gelu", "silu", "max", "min", "select", "clamp", "inf",     "nan"};
  for (std::string_view r : kReserved) {
    if (s == r) return true;
  }
  return false;
}

std::string read_identifier(const Field& f, std::string_view what) {
  std::string s = read_string(f);
  if (!is_identifier(s)) {
    f.fail(std::string(what) + " '" + excerpt(s) +
           "' is not an identifier (letters, digits and '_', not starting with a digit)");
  }
  return s;
}

}  // namespace kq::spec_detail
