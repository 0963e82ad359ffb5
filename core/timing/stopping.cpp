#include "timing/stopping.hpp"

#include <algorithm>

#include "stats/stats.hpp"

namespace kq {

void quick_timing(TimingPolicy& t) {
  t.max_rounds = std::max(t.min_rounds, std::min(t.max_rounds, 50));
  t.max_seconds = std::min(t.max_seconds, 5.0);
  t.warmup_ms = std::min(t.warmup_ms, 20.0);
}

namespace {

bool sharp(const std::map<std::string, std::vector<double>>& samples, const Spec& spec) {
  const double width = spec.decision.min_speedup - 1.0;
  // The first baseline being timed.
  auto base = samples.end();
  for (const auto& b : spec.decision.baselines)
    if (base == samples.end()) base = samples.find(b);
  if (base != samples.end() && samples.size() > 1) {
    for (const auto& [arm, s] : samples) {
      if (arm == base->first) continue;
      SpeedupEstimate e = bootstrap_speedup(base->second, s, 400, 7);
      if (e.hi - e.lo > width) return false;
    }
    return true;
  }
  for (const auto& [arm, s] : samples) {
    auto [lo, hi] = median_ci95(s);
    const double med = summarize(s).median;
    if (med <= 0 || (hi - lo) / med > width) return false;
  }
  return true;
}

}  // namespace

std::string stop_reason(const std::map<std::string, std::vector<double>>& samples, const Spec& spec,
                        int rounds, double elapsed_s) {
  if (rounds < spec.timing.min_rounds) return {};
  if (sharp(samples, spec)) return "confidence";
  if (rounds >= spec.timing.max_rounds) return "max_rounds";
  if (elapsed_s >= spec.timing.max_seconds) return "max_seconds";
  return {};
}

}  // namespace kq
