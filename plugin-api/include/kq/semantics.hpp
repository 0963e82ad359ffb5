// The float64 definition of every kq::Op: what the host's reference computes and so what every
// arm must reproduce. Header-inline so the evaluators compile each op into their loops; in the
// plugin API so that arms which fold constants or spot-check results on the host use the very
// same definitions as the reference.
//
// Edge semantics worth knowing (all follow from the formulas, applied literally):
//   - NaN inputs give NaN outputs for every op except the comparisons (0, or 1 for ne) and
//     select, whose unused branch is not looked at. Where a NaN operand is returned, its payload
//     is kept (the first NaN operand of max/min wins).
//   - neg flips the sign of everything, NaN included; abs clears it, NaN included.
//   - gelu(-inf) and silu(-inf) are NaN (-inf * 0), as the formulas say.
//   - clamp with a NaN bound is NaN (the bound goes through max/min); with lo > hi it is hi.
// The evaluators store every node's value as a double, so no two ops are fused into one rounding
// (no FMA contraction across nodes).
#pragma once
#include <cmath>
#include <limits>
#include <numbers>

#include "kq/expr.hpp"

namespace kq::ref {

inline double relu(double x) {
  if (std::isnan(x)) return x;
  return x > 0.0 ? x : 0.0;  // -0 and negatives give +0
}

// IEEE maxNum would drop the NaN; the reference propagates it instead, and orders the zeros.
inline double max(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0 in either order
  return a > b ? a : b;
}

inline double min(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) = -0 in either order
  return a < b ? a : b;
}

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// 0.5 x (1 + erf(x / sqrt 2)) written with erfc: the same function, without the cancellation
// of 1 + erf(...) for negative x (at x = -7.5 the erf form is wrong in the 4th digit).
inline double gelu(double x) { return 0.5 * x * std::erfc(-x / std::numbers::sqrt2); }

inline double silu(double x) { return x * sigmoid(x); }

inline double truth(bool b) { return b ? 1.0 : 0.0; }

// One op on its operands; operands beyond the op's arity are ignored. Constant and input are
// leaves, not computations: they return NaN here and the evaluators never call them. The switch
// is on a template argument, so each instantiation folds to its one case.
// clang-format off
template <Op op>
inline double apply(double a, [[maybe_unused]] double b, [[maybe_unused]] double c) {
  switch (op) {
    case Op::neg:     return -a;
    case Op::relu:    return relu(a);
    case Op::abs:     return std::fabs(a);
    case Op::exp:     return std::exp(a);
    case Op::log:     return std::log(a);
    case Op::sqrt:    return std::sqrt(a);
    case Op::tanh:    return std::tanh(a);
    case Op::sigmoid: return sigmoid(a);
    case Op::erf:     return std::erf(a);
    case Op::gelu:    return gelu(a);
    case Op::silu:    return silu(a);
    case Op::add:     return a + b;
    case Op::sub:     return a - b;
    case Op::mul:     return a * b;
    case Op::div:     return a / b;
    case Op::max:     return max(a, b);
    case Op::min:     return min(a, b);
    case Op::lt:      return truth(a < b);
    case Op::le:      return truth(a <= b);
    case Op::gt:      return truth(a > b);
    case Op::ge:      return truth(a >= b);
    case Op::eq:      return truth(a == b);
    case Op::ne:      return truth(a != b);  // true when either is NaN
    case Op::select:  return a != 0.0 ? b : c;  // a NaN condition selects b
    case Op::clamp:   return min(max(a, b), c);
    case Op::constant:
    case Op::input:   break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}
// clang-format on

// Calls f.template operator()<op>() with `op` as a compile-time constant, so a loop written once
// in `f` is compiled per op with no dispatch inside it. Leaves are not dispatched.
// clang-format off
template <class F>
inline void visit_op(Op op, F&& f) {
  switch (op) {
    case Op::neg:      f.template operator()<Op::neg>(); return;
    case Op::relu:     f.template operator()<Op::relu>(); return;
    case Op::abs:      f.template operator()<Op::abs>(); return;
    case Op::exp:      f.template operator()<Op::exp>(); return;
    case Op::log:      f.template operator()<Op::log>(); return;
    case Op::sqrt:     f.template operator()<Op::sqrt>(); return;
    case Op::tanh:     f.template operator()<Op::tanh>(); return;
    case Op::sigmoid:  f.template operator()<Op::sigmoid>(); return;
    case Op::erf:      f.template operator()<Op::erf>(); return;
    case Op::gelu:     f.template operator()<Op::gelu>(); return;
    case Op::silu:     f.template operator()<Op::silu>(); return;
    case Op::add:      f.template operator()<Op::add>(); return;
    case Op::sub:      f.template operator()<Op::sub>(); return;
    case Op::mul:      f.template operator()<Op::mul>(); return;
    case Op::div:      f.template operator()<Op::div>(); return;
    case Op::max:      f.template operator()<Op::max>(); return;
    case Op::min:      f.template operator()<Op::min>(); return;
    case Op::lt:       f.template operator()<Op::lt>(); return;
    case Op::le:       f.template operator()<Op::le>(); return;
    case Op::gt:       f.template operator()<Op::gt>(); return;
    case Op::ge:       f.template operator()<Op::ge>(); return;
    case Op::eq:       f.template operator()<Op::eq>(); return;
    case Op::ne:       f.template operator()<Op::ne>(); return;
    case Op::select:   f.template operator()<Op::select>(); return;
    case Op::clamp:    f.template operator()<Op::clamp>(); return;
    case Op::constant:
    case Op::input:    return;
  }
}
// clang-format on

// The same with the op known only at run time (one switch per call).
inline double apply(Op op, double a, double b, double c) {
  double r = std::numeric_limits<double>::quiet_NaN();
  visit_op(op, [&]<Op o>() { r = apply<o>(a, b, c); });
  return r;
}

}  // namespace kq::ref
