// The spelling of the expression language, shared by the parser and to_text so that what one
// writes the other reads.
#pragma once
#include <optional>
#include <string_view>

#include "kq/expr.hpp"

namespace kq::syntax {

struct Function {
  std::string_view name;
  Op op;
};

// Called by name. These names are reserved: an input with one of them cannot be referenced,
// because a name is looked up as a function first.
inline constexpr Function kFunctions[] = {
    {"relu", Op::relu},       {"abs", Op::abs},     {"exp", Op::exp}, {"log", Op::log},
    {"sqrt", Op::sqrt},       {"tanh", Op::tanh},   {"erf", Op::erf}, {"gelu", Op::gelu},
    {"sigmoid", Op::sigmoid}, {"silu", Op::silu},   {"max", Op::max}, {"min", Op::min},
    {"select", Op::select},   {"clamp", Op::clamp},
};

// Constant names, also looked up before inputs.
inline constexpr std::string_view kInf = "inf";
inline constexpr std::string_view kNan = "nan";

inline std::optional<Op> function_named(std::string_view name) {
  for (const Function& f : kFunctions)
    if (f.name == name) return f.op;
  return std::nullopt;
}

// The name a function op is called by; empty for anything that is not a function.
inline constexpr std::string_view function_name(Op op) {
  for (const Function& f : kFunctions)
    if (f.op == op) return f.name;
  return {};
}

// The infix symbol of a binary operator; empty for anything written another way.
inline constexpr std::string_view infix_symbol(Op op) {
  switch (op) {
    case Op::add:
      return "+";
    case Op::sub:
      return "-";
    case Op::mul:
      return "*";
    case Op::div:
      return "/";
    case Op::lt:
      return "<";
    case Op::le:
      return "<=";
    case Op::gt:
      return ">";
    case Op::ge:
      return ">=";
    case Op::eq:
      return "==";
    case Op::ne:
      return "!=";
    default:
      return {};
  }
}

}  // namespace kq::syntax
