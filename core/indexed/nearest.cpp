#include "indexed/nearest.hpp"

#include <algorithm>

namespace kq::ix {
namespace {

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const std::size_t limit = std::max<std::size_t>(1, std::max(word.size(), c.size()) / 3);
    const std::size_t d = levenshtein(word, c);
    if (d <= limit && (!best || d < best_distance)) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace kq::ix
