// The reference's accumulators. Sums are compensated (Neumaier): a plain float64 sum of 2^31
// terms can lose every digit a float32 kernel keeps, so the reference would be the less accurate
// side of the comparison.
#pragma once
#include <cmath>
#include <cstdint>

#include "kq/semantics.hpp"

namespace kq::ix {

// Neumaier's variant of Kahan summation: the rounding error of each addition is added to a
// separate compensation, whichever operand is larger. Once the running sum is not finite the
// compensation is dropped (inf - inf would make it NaN), so inf and NaN propagate as in a
// plain sum.
class CompensatedSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    if (std::isfinite(t)) {
      if (std::fabs(sum_) >= std::fabs(x))
        compensation_ += (sum_ - t) + x;
      else
        compensation_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

// Running state of a reduction or a scan: one kind of accumulation chosen at construction.
enum class Accumulation : std::uint8_t { sum, prod, max, min };

class Accumulator {
 public:
  explicit Accumulator(Accumulation kind) : kind_(kind) {
    if (kind == Accumulation::prod) plain_ = 1.0;
    if (kind == Accumulation::max) plain_ = -INFINITY;
    if (kind == Accumulation::min) plain_ = INFINITY;
  }
  void add(double x) {
    switch (kind_) {
      case Accumulation::sum:
        sum_.add(x);
        return;
      case Accumulation::prod:
        plain_ *= x;
        return;
      case Accumulation::max:
        plain_ = ref::max(plain_, x);  // NaN propagates, the first one wins
        return;
      case Accumulation::min:
        plain_ = ref::min(plain_, x);
        return;
    }
  }
  double value() const { return kind_ == Accumulation::sum ? sum_.value() : plain_; }

 private:
  Accumulation kind_;
  CompensatedSum sum_;
  double plain_ = 0.0;
};

}  // namespace kq::ix
