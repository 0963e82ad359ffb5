#include "stats/stats.hpp"

#include <algorithm>
#include <cmath>

namespace kq {

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  double pos = q * static_cast<double>(s.size() - 1);
  auto i = static_cast<std::size_t>(pos);
  if (i + 1 >= s.size()) return s.back();
  double f = pos - static_cast<double>(i);
  return s[i] * (1 - f) + s[i + 1] * f;
}

SampleStats summarize(std::vector<double> v) {
  SampleStats st;
  st.n = static_cast<int>(v.size());
  if (v.empty()) return st;
  std::sort(v.begin(), v.end());
  st.min = v.front();
  st.max = v.back();
  st.median = quantile_sorted(v, 0.5);
  st.q1 = quantile_sorted(v, 0.25);
  st.q3 = quantile_sorted(v, 0.75);
  return st;
}

std::pair<double, double> median_ci95(std::vector<double> v) {
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  if (v.size() < 6) return {v.front(), v.back()};
  const double half = 1.96 * std::sqrt(n) / 2.0;
  auto lo = static_cast<long>(std::floor(n / 2.0 - half));
  auto hi = static_cast<long>(std::ceil(n / 2.0 + half));
  lo = std::clamp(lo, 0L, static_cast<long>(v.size()) - 1);
  hi = std::clamp(hi, 0L, static_cast<long>(v.size()) - 1);
  return {v[static_cast<std::size_t>(lo)], v[static_cast<std::size_t>(hi)]};
}

}  // namespace kq
