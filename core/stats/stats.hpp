// The statistics of timing samples, used by timing (stopping rules), decision and reports: order
// statistics, the median's confidence interval and the bootstrap interval of a speed-up.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace kq {

struct SampleStats {
  int n = 0;
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0;
  double iqr() const { return q3 - q1; }
  double rel_noise() const { return median > 0 ? iqr() / median : 0; }  // IQR / median
};

SampleStats summarize(std::vector<double> samples);

// Linear-interpolated quantile of sorted samples, q in [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double q);

// Distribution-free 95% confidence interval of the median from the order statistics
// (binomial, normal approximation); {lo, hi}; {min, max} below 6 samples.
std::pair<double, double> median_ci95(std::vector<double> samples);

struct SpeedupEstimate {
  double ratio = 0, lo = 0, hi = 0;  // baseline median / arm median, and its 95% interval
};

// Bootstrap (percentile) interval of median(base) / median(arm); deterministic (bootstrap.cpp).
SpeedupEstimate bootstrap_speedup(const std::vector<double>& base, const std::vector<double>& arm,
                                  int resamples = 2000, std::uint64_t seed = 1);

}  // namespace kq
