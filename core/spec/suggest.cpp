#include "spec/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace kq {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  // d[i][j]: distance between a[0..i) and b[0..j), kept as three rolling rows.
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (std::string_view c : candidates) {
    const std::size_t limit = std::max<std::size_t>(1, std::max(word.size(), c.size()) / 3);
    // The difference in length bounds the distance from below; skipping those also keeps a
    // huge word from costing its length times every candidate's.
    if (word.size() > c.size() + limit) continue;
    std::size_t d = edit_distance(word, c);
    // A truncated key ("owner" for "ownership") is as good as a close one.
    if (word.size() >= 3 && c.size() > word.size() &&
        edit_distance(word, c.substr(0, word.size())) == 0) {
      d = std::min(d, limit);
    }
    if (d <= limit && (!best || d < best_distance)) {
      best = std::string(c);
      best_distance = d;
    }
  }
  return best;
}

std::string join_names(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i != 0) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace kq
