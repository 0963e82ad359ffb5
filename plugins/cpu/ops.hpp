// Element functions of the semantics language, in the arithmetic type T (float or double).
//
// Each function is a small branch-free expression so that the per-op loops in block_eval.hpp
// vectorise: comparisons and selects become compare + blend instructions. The exact semantics
// (core/expr/reference.hpp) are spelled out here instead of using std::max/std::fmax, because
// std::max is not NaN-propagating (it returns its first argument when a comparison is false) and
// std::fmax swallows NaN; neither orders signed zeros.
//
// This file relies on IEEE arithmetic: it must be compiled without -ffast-math (the target adds
// -fno-fast-math; see CMakeLists.txt). Under -ffinite-math-only the `x != x` NaN tests below would
// be folded to false.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kq/expr.hpp"

namespace kq::cpu::ops {

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
inline T is_nan_select(T x, T nan_result, T otherwise) {
  return x != x ? nan_result : otherwise;
}

// relu(x) = x > 0 ? x : +0, NaN stays NaN (the same payload), so relu(-0) = +0.
template <class T>
inline T relu(T x) {
  T r = x > T(0) ? x : T(0);
  return is_nan_select(x, x, r);
}

// NaN-propagating max. When a == b the bit patterns are identical except for +0/-0, so AND-ing them
// keeps the sign bit only if both are -0: max(-0, +0) = +0, max(-0, -0) = -0.
template <class T>
inline T max(T a, T b) {
  const T both =
      std::bit_cast<T>(static_cast<Bits<T>>(std::bit_cast<Bits<T>>(a) & std::bit_cast<Bits<T>>(b)));
  T r = a > b ? a : b;  // b when either is NaN; a NaN a is put back by the last line
  r = a == b ? both : r;
  return is_nan_select(a, a, r);  // b NaN already gives b: every comparison above was false
}

// NaN-propagating min; OR-ing equal values keeps the sign bit if either is -0: min(-0, +0) = -0.
template <class T>
inline T min(T a, T b) {
  const T either =
      std::bit_cast<T>(static_cast<Bits<T>>(std::bit_cast<Bits<T>>(a) | std::bit_cast<Bits<T>>(b)));
  T r = a < b ? a : b;
  r = a == b ? either : r;
  return is_nan_select(a, a, r);
}

// Stable logistic: the textbook 1 / (1 + exp(-x)) overflows exp for x below about -88 in float and
// returns 0 where the true value is a representable tiny number. With e = exp(-|x|) in (0, 1]
// nothing overflows: x >= 0 gives 1 / (1 + e), x < 0 gives e / (1 + e); one exp, one division. NaN
// propagates through exp.
template <class T>
inline T sigmoid(T x) {
  const T e = std::exp(-std::abs(x));
  const T num = x >= T(0) ? T(1) : e;
  return num / (T(1) + e);
}

// gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), evaluated as x * (0.5 erfc(-x / sqrt 2)), which is the
// same function. For negative x, 1 + erf(..) cancels catastrophically in float (for x below about
// -5.5 it is exactly 0 while the true value is still a normal float); erfc has no cancellation. For
// large positive x, 0.5 * erfc(..) is exactly 1, so gelu(x) = x exactly, as in the reference.
template <class T>
inline T gelu(T x) {
  constexpr T kInvSqrt2 = T(0.70710678118654752440);
  return x * (T(0.5) * std::erfc(-x * kInvSqrt2));
}

// The scalar definition of every operation in T: the body of the vectorised loops. (Constants are
// folded in float64 by the reference's own definitions instead: see program.hpp.)
// clang-format off
struct Neg { template <class T> static T f(T x) { return -x; } };
struct Relu { template <class T> static T f(T x) { return relu(x); } };
struct Abs { template <class T> static T f(T x) { return std::abs(x); } };
struct Exp { template <class T> static T f(T x) { return std::exp(x); } };
struct Log { template <class T> static T f(T x) { return std::log(x); } };
struct Sqrt { template <class T> static T f(T x) { return std::sqrt(x); } };
struct Tanh { template <class T> static T f(T x) { return std::tanh(x); } };
struct Sigmoid { template <class T> static T f(T x) { return sigmoid(x); } };
struct Erf { template <class T> static T f(T x) { return std::erf(x); } };
struct Gelu { template <class T> static T f(T x) { return gelu(x); } };
struct Silu { template <class T> static T f(T x) { return x * sigmoid(x); } };

struct Add { template <class T> static T f(T a, T b) { return a + b; } };
struct Sub { template <class T> static T f(T a, T b) { return a - b; } };
struct Mul { template <class T> static T f(T a, T b) { return a * b; } };
struct Div { template <class T> static T f(T a, T b) { return a / b; } };
struct Max { template <class T> static T f(T a, T b) { return max(a, b); } };
struct Min { template <class T> static T f(T a, T b) { return min(a, b); } };
// Ordered comparisons are false when either side is NaN; ne is the negation of eq, so true.
struct Lt { template <class T> static T f(T a, T b) { return a < b ? T(1) : T(0); } };
struct Le { template <class T> static T f(T a, T b) { return a <= b ? T(1) : T(0); } };
struct Gt { template <class T> static T f(T a, T b) { return a > b ? T(1) : T(0); } };
struct Ge { template <class T> static T f(T a, T b) { return a >= b ? T(1) : T(0); } };
struct Eq { template <class T> static T f(T a, T b) { return a == b ? T(1) : T(0); } };
struct Ne { template <class T> static T f(T a, T b) { return a == b ? T(0) : T(1); } };

// select(c, a, b): a where c != 0; a NaN c is != 0, so it selects a.
struct Select { template <class T> static T f(T c, T a, T b) { return c != T(0) ? a : b; } };
// clamp(x, lo, hi) = min(max(x, lo), hi), with the NaN and signed-zero rules of max and min.
struct Clamp { template <class T> static T f(T x, T lo, T hi) { return min(max(x, lo), hi); } };
// clang-format on

// Calls `fn.template operator()<F>()` with the functor type of `op`; returns false for leaves. The
// kernel table's one switch.
template <class Fn>
inline bool visit_op(Op op, Fn&& fn) {
  switch (op) {
    case Op::neg:
      fn.template operator()<Neg>();
      return true;
    case Op::relu:
      fn.template operator()<Relu>();
      return true;
    case Op::abs:
      fn.template operator()<Abs>();
      return true;
    case Op::exp:
      fn.template operator()<Exp>();
      return true;
    case Op::log:
      fn.template operator()<Log>();
      return true;
    case Op::sqrt:
      fn.template operator()<Sqrt>();
      return true;
    case Op::tanh:
      fn.template operator()<Tanh>();
      return true;
    case Op::sigmoid:
      fn.template operator()<Sigmoid>();
      return true;
    case Op::erf:
      fn.template operator()<Erf>();
      return true;
    case Op::gelu:
      fn.template operator()<Gelu>();
      return true;
    case Op::silu:
      fn.template operator()<Silu>();
      return true;
    case Op::add:
      fn.template operator()<Add>();
      return true;
    case Op::sub:
      fn.template operator()<Sub>();
      return true;
    case Op::mul:
      fn.template operator()<Mul>();
      return true;
    case Op::div:
      fn.template operator()<Div>();
      return true;
    case Op::max:
      fn.template operator()<Max>();
      return true;
    case Op::min:
      fn.template operator()<Min>();
      return true;
    case Op::lt:
      fn.template operator()<Lt>();
      return true;
    case Op::le:
      fn.template operator()<Le>();
      return true;
    case Op::gt:
      fn.template operator()<Gt>();
      return true;
    case Op::ge:
      fn.template operator()<Ge>();
      return true;
    case Op::eq:
      fn.template operator()<Eq>();
      return true;
    case Op::ne:
      fn.template operator()<Ne>();
      return true;
    case Op::select:
      fn.template operator()<Select>();
      return true;
    case Op::clamp:
      fn.template operator()<Clamp>();
      return true;
    case Op::constant:
    case Op::input:
      return false;
  }
  return false;
}

}  // namespace kq::cpu::ops
