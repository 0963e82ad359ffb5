#include "util/copy_blocks.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

namespace kq {

namespace {

struct Run {
  std::size_t start = 0, width = 0;
  std::size_t j = 0;  // at[j] is its first position
};

void check_positions(const std::vector<std::size_t>& at, std::size_t n) {
  for (std::size_t j = 0; j < at.size(); ++j)
    if ((j > 0 && at[j] <= at[j - 1]) || at[j] >= n)
      throw std::invalid_argument("copy_blocks: position " + std::to_string(at[j]) + " (#" +
                                  std::to_string(j) + ") is out of order or past " +
                                  std::to_string(n));
}

std::vector<Run> runs_of(const std::vector<std::size_t>& at) {
  std::vector<Run> runs;
  for (std::size_t j = 0; j < at.size();) {
    std::size_t end = j + 1;
    while (end < at.size() && at[end] == at[end - 1] + 1) ++end;
    runs.push_back({at[j], end - j, j});
    j = end;
  }
  return runs;
}

class Grower {
 public:
  Grower(std::size_t n, std::size_t es, const CopyBlockShape& shape)
      : n_(n), es_(es), spare_(shape.spare_bytes / es), max_pitch_(shape.max_pitch_bytes) {}

  // Runs, in order, into blocks: each run grows the last block if it may, else starts one.
  // `pitch` 0: a lattice's pitch is the greatest common divisor of its rows' offsets (a random
  // part of a column still lands on it); else that pitch.
  std::vector<CopyBlock> grow(const std::vector<Run>& runs, std::size_t pitch) const {
    std::vector<CopyBlock> blocks;
    for (const Run& r : runs) {
      std::optional<CopyBlock> g;
      if (!blocks.empty()) {
        const std::optional<CopyBlock> a = contiguous(blocks.back(), r),
                                       b = lattice(blocks.back(), r, pitch);
        g = a && (!b || a->covered() <= b->covered()) ? a : b;
      }
      if (!g) {
        blocks.push_back({r.start, 0, 1, 0, {}});
        g = contiguous(blocks.back(), r);
      }
      for (std::size_t i = 0; i < r.width; ++i) g->members.push_back(r.j + i);
      blocks.back() = std::move(*g);
    }
    return blocks;
  }

 private:
  // The block as one longer row, where it is one row.
  std::optional<CopyBlock> contiguous(const CopyBlock& b, const Run& r) const {
    if (b.rows != 1) return std::nullopt;
    CopyBlock g = b;
    g.width = g.pitch = r.start + r.width - b.first;
    return fits(g, r) ? std::optional(g) : std::nullopt;
  }

  std::optional<CopyBlock> lattice(const CopyBlock& b, const Run& r, std::size_t pitch) const {
    const std::size_t off = r.start - b.first;
    CopyBlock g = b;
    g.pitch = pitch ? pitch : b.rows == 1 ? off : std::gcd(b.pitch, off);
    g.width = std::max(b.width, r.width);
    if (g.pitch == 0 || off % g.pitch != 0 || g.pitch < g.width) return std::nullopt;
    g.rows = off / g.pitch + 1;
    return fits(g, r) ? std::optional(g) : std::nullopt;
  }

  bool fits(const CopyBlock& g, const Run& r) const {
    return g.covered() <= 2 * (g.members.size() + r.width) + spare_ &&
           g.first + (g.rows - 1) * g.pitch + g.width <= n_ &&
           (g.rows == 1 || g.pitch * es_ <= max_pitch_);
  }

  std::size_t n_, es_, spare_, max_pitch_;
};

// Rows within a call's worth of bytes go as one plain copy: no dearer, and the surest (a copy
// engine's rows of a few bytes each).
void flatten_small(std::vector<CopyBlock>& blocks, std::size_t es, std::size_t spare_bytes) {
  for (CopyBlock& b : blocks) {
    const std::size_t extent = (b.rows - 1) * b.pitch + b.width;
    if (b.rows > 1 && extent * es <= spare_bytes) b.rows = 1, b.width = b.pitch = extent;
  }
}

std::size_t covered(const std::vector<CopyBlock>& blocks) {
  std::size_t c = 0;
  for (const CopyBlock& b : blocks) c += b.covered();
  return c;
}

}  // namespace

std::vector<CopyBlock> copy_blocks(const std::vector<std::size_t>& at, std::size_t n,
                                   std::size_t element_bytes, const CopyBlockShape& shape) {
  check_positions(at, n);
  const std::size_t es = std::max<std::size_t>(element_bytes, 1);
  const Grower grower(n, es, shape);
  const std::vector<Run> runs = runs_of(at);
  std::vector<CopyBlock> best = grower.grow(runs, 0);
  for (const std::size_t pitch : shape.pitches) {
    if (pitch < 2) continue;
    std::map<std::size_t, std::vector<Run>> by_remainder;
    for (const Run& r : runs) by_remainder[r.start % pitch].push_back(r);
    std::vector<CopyBlock> blocks;
    for (const auto& [rem, group] : by_remainder)
      for (CopyBlock& b : grower.grow(group, pitch)) blocks.push_back(std::move(b));
    if (blocks.size() < best.size() ||
        (blocks.size() == best.size() && covered(blocks) < covered(best)))
      best = std::move(blocks);
  }
  flatten_small(best, es, shape.spare_bytes);
  return best;
}

std::vector<std::size_t> row_major_pitches(const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> out;
  std::size_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 1;) {
    stride *= static_cast<std::size_t>(std::max<std::int64_t>(shape[d], 1));
    if (stride > 1 && (out.empty() || out.back() != stride)) out.push_back(stride);
  }
  return out;
}

}  // namespace kq
