// The statistics of timing samples, used by timing (stopping rules), decision and reports: order
// statistics, the median's confidence interval and the bootstrap interval of a speed-up.
#pragma once
#include <cstdint>
#include <optional>
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

// Run-to-run noise of samples in the order they were taken (block_noise.cpp): the samples are
// split into contiguous blocks of rounds, kMinBlocks to kMaxBlocks of them, of
// kBlockSamples each where there are enough (at least kMinBlockSamples), and the noise is the
// range of the block medians over the median of all samples, (max - min) / median. It sees
// what the interval of a median cannot: a machine whose speed drifts during a run (load beside
// it, clocks, heat) moves whole blocks of rounds, while a shuffle of the samples hides it.
// Short blocks give noisier medians, so a short run looks noisier: a guard errs that way. No
// estimate (nullopt) under kMinBlocks * kMinBlockSamples samples.
inline constexpr int kMinBlocks = 4, kMaxBlocks = 8, kBlockSamples = 4, kMinBlockSamples = 2;
std::optional<double> block_noise(const std::vector<double>& samples_in_order);

}  // namespace kq
