#include <algorithm>

#include "stats/stats.hpp"

namespace kq {

std::optional<double> block_noise(const std::vector<double>& samples) {
  const int n = static_cast<int>(samples.size());
  if (n < kMinBlocks * kMinBlockSamples) return std::nullopt;
  const int blocks = std::clamp(n / kBlockSamples, kMinBlocks, kMaxBlocks);
  std::vector<double> medians;
  for (int b = 0; b < blocks; ++b) {
    const auto first = samples.begin() + b * n / blocks,
               last = samples.begin() + (b + 1) * n / blocks;
    medians.push_back(summarize(std::vector<double>(first, last)).median);
  }
  const double median = summarize(samples).median;
  if (!(median > 0)) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  return (*hi - *lo) / median;
}

}  // namespace kq
