// Sums in the compute type that keep the digits a float32 kernel should: a block of lanes is
// summed pairwise (eight running partial sums over at most 64 terms, then a tree), and the
// blocks' partial sums are added with Neumaier's compensation. The error then grows like
// (8 + log2 of the block) u, plus u for the whole row, instead of N u for a plain running sum.
#pragma once
#include <cmath>
#include <cstdint>

namespace kq::cpu {

template <class T>
inline T pairwise_sum(const T* a, std::int64_t n) {
  if (n <= 64) {
    T acc[8] = {};
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += a[i + k];
    for (int k = 0; i < n; ++i, ++k) acc[k] += a[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }
  const std::int64_t half = (n / 2 + 7) & ~std::int64_t{7};
  return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

// Neumaier's variant of Kahan summation, as the reference's (core/indexed/accumulate.hpp) but
// in T: once the running sum is not finite the compensation is dropped, so inf and NaN
// propagate as in a plain sum.
template <class T>
class CompensatedSum {
 public:
  void add(T x) {
    const T t = sum_ + x;
    if (std::isfinite(t)) {
      if (std::abs(sum_) >= std::abs(x))
        comp_ += (sum_ - t) + x;
      else
        comp_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  T value() const { return std::isfinite(sum_) ? sum_ + comp_ : sum_; }

 private:
  T sum_ = T(0);
  T comp_ = T(0);
};

}  // namespace kq::cpu
