// bootstrap_speedup (stats.hpp): the percentile bootstrap of a ratio of medians.
#include <algorithm>
#include <random>

#include "stats/stats.hpp"

namespace kq {
namespace {

double median_of(std::vector<double>& v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double m = *mid;
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), mid)) / 2;
  return m;
}

}  // namespace

SpeedupEstimate bootstrap_speedup(const std::vector<double>& base, const std::vector<double>& arm,
                                  int resamples, std::uint64_t seed) {
  SpeedupEstimate e;
  if (base.empty() || arm.empty()) return e;
  e.ratio = summarize(base).median / summarize(arm).median;
  std::mt19937_64 rng(seed);
  std::vector<double> ratios, a(arm.size()), b(base.size());
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::uniform_int_distribution<std::size_t> pa(0, arm.size() - 1), pb(0, base.size() - 1);
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : a) x = arm[pa(rng)];
    for (auto& x : b) x = base[pb(rng)];
    ratios.push_back(median_of(b) / median_of(a));
  }
  std::sort(ratios.begin(), ratios.end());
  e.lo = quantile_sorted(ratios, 0.025);
  e.hi = quantile_sorted(ratios, 0.975);
  return e;
}

}  // namespace kq
