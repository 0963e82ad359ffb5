// The accumulation bound's rules (docs/indexed-statements.md, "The accumulation bound"): beside
// each float64 value v the reference computes, E, a first-order bound on the error an arm makes
// computing it in a floating-point type of unit roundoff u, in units of u. Inputs are exact; each
// operation adds the error its operands carry, scaled by how much it amplifies them, and its own
// rounding, |v|. A sum of K terms rounds like sqrt(K) roundings of its magnitudes (the typical
// growth: a kernel's partial sums are free to be added in any order), or like its running sums
// where those are larger (alike terms, whose roundings do not cancel: SumBound).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "kq/expr.hpp"

namespace kq::ix {

// A value and its error bound in units of u (0 where the bound is not computed).
struct Term {
  double v = 0.0;
  double e = 0.0;
};

// factor * e, where an exact operand (e == 0) stays exact even under an infinite factor: log(a)
// at a = 0, say, or a product with an infinite term.
inline double scaled(double factor, double e) { return e == 0.0 ? 0.0 : factor * e; }

// E of `op` applied to `a` (its operands, with their bounds) giving v.
inline double apply_bound(Op op, const Term* a, double v) {
  const double r = std::fabs(v);  // the operation's own rounding
  switch (op) {
    case Op::neg:
    case Op::abs:
    case Op::relu:  // exact, and 1-Lipschitz
      return a[0].e;
    case Op::add:
    case Op::sub:
      return a[0].e + a[1].e + r;
    case Op::mul:
      return scaled(std::fabs(a[1].v), a[0].e) + scaled(std::fabs(a[0].v), a[1].e) + r;
    case Op::div:
      if (a[1].v == 0.0) return std::numeric_limits<double>::infinity();
      return (a[0].e + scaled(r, a[1].e)) / std::fabs(a[1].v) + r;
    case Op::max:
    case Op::min:
      return std::max(a[0].e, a[1].e);
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
    case Op::eq:
    case Op::ne:
      return 0.0;  // an integer answer: a comparison that a rounding flips is not bounded here
    case Op::select:
      return a[0].v != 0.0 ? a[1].e : a[2].e;  // the branch chosen (a NaN condition picks b)
    case Op::clamp: {
      // The operand whose value came out (the largest bound of those that did, at ties).
      double e = -1.0;
      for (int k = 0; k < 3; ++k)
        if (a[k].v == v) e = std::max(e, a[k].e);
      return e >= 0.0 ? e : std::max({a[0].e, a[1].e, a[2].e});
    }
    case Op::sqrt:
      return scaled(0.5 / std::sqrt(std::fabs(a[0].v)), a[0].e) + r;
    case Op::exp:
      return scaled(r, a[0].e) + r;
    case Op::log:
      return scaled(1.0 / std::fabs(a[0].v), a[0].e) + r;
    // The others: L * Ea + |v| with L a bound on |f'| over the whole line.
    case Op::tanh:
      return a[0].e + r;
    case Op::sigmoid:
      return 0.25 * a[0].e + r;
    case Op::erf:
      return std::numbers::inv_sqrtpi * 2.0 * a[0].e + r;
    case Op::gelu:
      return 1.13 * a[0].e + r;
    case Op::silu:
      return 1.1 * a[0].e + r;
    case Op::constant:
    case Op::input:
      break;
  }
  return 0.0;
}

// The bound of a sum of K terms t_i: sum E_i + max(sqrt(K) sum |t_i|, sum over i >= 2 of
// |s_i|), s_i the running sums in the reduced index's order. sqrt(K) is how random roundings
// grow; where the terms are alike (a constant, a large offset), each partial sum rounds the same
// way and the error of a running sum (a thread's FMA loop, cuBLAS's per-output accumulation)
// grows like K: the sum of the partial sums, which one rounding each bounds, covers it (one
// float32 running sum of 65536 equal terms is off by 40 sqrt(K) u sum |t_i|). Plain float64
// sums: a bound needs no last digit.
class SumBound {
 public:
  SumBound() = default;
  // The bound of the terms of a longer sum that follow `terms_before` terms whose plain sum is
  // `prefix`: its running sums are the whole sum's (a reduction's chunk, machine.cpp).
  static SumBound after(double prefix, std::int64_t terms_before) {
    SumBound b;
    b.running_ = prefix;
    b.terms_ = terms_before;
    return b;
  }
  // The terms of `later`, started after() this one's, added after these.
  void append(const SumBound& later) {
    errors_ += later.errors_;
    magnitudes_ += later.magnitudes_;
    partials_ += later.partials_;
    running_ = later.running_;
    terms_ = later.terms_;
  }
  // The plain sum of the terms so far (from the prefix, where one was given).
  double running() const { return running_; }

  void add(const Term& t) {
    errors_ += t.e;
    magnitudes_ += std::fabs(t.v);
    running_ += t.v;
    if (terms_ > 0) partials_ += std::fabs(running_);  // the first term is not a rounding
    ++terms_;
  }
  double value() const {
    return errors_ + std::max(std::sqrt(static_cast<double>(terms_)) * magnitudes_, partials_);
  }

 private:
  double errors_ = 0.0, magnitudes_ = 0.0, running_ = 0.0, partials_ = 0.0;
  std::int64_t terms_ = 0;
};

// The bound of a product of K terms: |v| sum E_i / |t_i| + K |v|, the first part kept as the
// running product rule so that a zero term needs no division.
class ProdBound {
 public:
  void add(const Term& t) {
    const double m = std::fabs(t.v);
    errors_ = scaled(m, errors_) + scaled(magnitude_, t.e);
    magnitude_ *= m;
    ++terms_;
  }
  double value() const { return errors_ + scaled(magnitude_, static_cast<double>(terms_)); }
  // The terms of `later` (a fresh ProdBound's) multiplied in after these: the running rule is
  // linear in this one's state.
  void append(const ProdBound& later) {
    errors_ = scaled(later.magnitude_, errors_) + scaled(magnitude_, later.errors_);
    magnitude_ *= later.magnitude_;
    terms_ += later.terms_;
  }

 private:
  double errors_ = 0.0, magnitude_ = 1.0;
  std::int64_t terms_ = 0;
};

}  // namespace kq::ix
