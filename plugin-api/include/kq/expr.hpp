// The semantics expression as plain data: a flat list of nodes in which every operand precedes
// the node that uses it (post-order), so evaluating nodes in order is always valid and the last
// node is the root. Produced by the host's parser; read by arms that generate code from it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kq {

enum class Op : std::uint8_t {
  // leaves
  constant,  // value
  input,     // input index into OpSpec::inputs
  // unary
  neg,
  relu,
  abs,
  exp,
  log,
  sqrt,
  tanh,
  sigmoid,
  erf,
  gelu,
  silu,
  // binary
  add,
  sub,
  mul,
  div,
  max,
  min,
  lt,
  le,
  gt,
  ge,
  eq,
  ne,  // 1 when true, 0 when false (false for NaN, like IEEE)
  // ternary
  select,  // select(c, a, b): a where c != 0, else b (a NaN c selects a)
  clamp,   // clamp(x, lo, hi) = min(max(x, lo), hi) with NaN x propagating
};

struct ExprNode {
  Op op = Op::constant;
  double value = 0.0;          // constant
  int input = -1;              // input
  int args[3] = {-1, -1, -1};  // operand node indices, all smaller than this node's index
};

struct Expr {
  std::vector<ExprNode> nodes;  // post-order; the root is nodes.back()
  std::string text;             // the source text it was parsed from
  int root() const { return static_cast<int>(nodes.size()) - 1; }
};

inline constexpr int arity(Op op) {
  switch (op) {
    case Op::constant:
    case Op::input:
      return 0;
    case Op::neg:
    case Op::relu:
    case Op::abs:
    case Op::exp:
    case Op::log:
    case Op::sqrt:
    case Op::tanh:
    case Op::sigmoid:
    case Op::erf:
    case Op::gelu:
    case Op::silu:
      return 1;
    case Op::select:
    case Op::clamp:
      return 3;
    default:
      return 2;
  }
}

inline constexpr std::string_view to_string(Op op) {
  switch (op) {
    case Op::constant:
      return "constant";
    case Op::input:
      return "input";
    case Op::neg:
      return "neg";
    case Op::relu:
      return "relu";
    case Op::abs:
      return "abs";
    case Op::exp:
      return "exp";
    case Op::log:
      return "log";
    case Op::sqrt:
      return "sqrt";
    case Op::tanh:
      return "tanh";
    case Op::sigmoid:
      return "sigmoid";
    case Op::erf:
      return "erf";
    case Op::gelu:
      return "gelu";
    case Op::silu:
      return "silu";
    case Op::add:
      return "add";
    case Op::sub:
      return "sub";
    case Op::mul:
      return "mul";
    case Op::div:
      return "div";
    case Op::max:
      return "max";
    case Op::min:
      return "min";
    case Op::lt:
      return "lt";
    case Op::le:
      return "le";
    case Op::gt:
      return "gt";
    case Op::ge:
      return "ge";
    case Op::eq:
      return "eq";
    case Op::ne:
      return "ne";
    case Op::select:
      return "select";
    case Op::clamp:
      return "clamp";
  }
  return "?";
}

}  // namespace kq
