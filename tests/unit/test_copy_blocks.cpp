// util/copy_blocks: a timed check's patch positions grouped into few copies. Every position lands
// in one block, in order, inside the array, and no block covers more than twice its positions
// plus a call's worth of spare bytes; the shapes fresh inputs make (a row, a product's column or
// a random part of it, a long scan's rests of rows, a convolution's window) take a copy or a few.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "util/copy_blocks.hpp"

namespace {

using kq::CopyBlock;
using Positions = std::vector<std::size_t>;

// The promises of copy_blocks, checked one by one; the blocks returned.
std::vector<CopyBlock> checked_blocks(const Positions& at, std::size_t n, std::size_t es,
                                      std::vector<std::size_t> pitches = {}) {
  kq::CopyBlockShape shape;
  shape.pitches = std::move(pitches);
  const std::vector<CopyBlock> blocks = kq::copy_blocks(at, n, es, shape);
  std::vector<int> taken(at.size(), 0);
  for (const CopyBlock& b : blocks) {
    INFO("block from " << b.first << ": " << b.rows << " rows of " << b.width << ", pitch "
                       << b.pitch);
    REQUIRE_FALSE(b.members.empty());
    CHECK(b.width >= 1);
    CHECK(b.pitch >= b.width);
    if (b.rows == 1) CHECK(b.pitch == b.width);
    CHECK(b.first + (b.rows - 1) * b.pitch + b.width <= n);
    CHECK(b.covered() * es <= 2 * b.members.size() * es + shape.spare_bytes);
    std::set<std::size_t> dense;
    for (std::size_t j : b.members) {
      REQUIRE(j < at.size());
      ++taken[j];
      REQUIRE(at[j] >= b.first);
      CHECK((at[j] - b.first) % b.pitch < b.width);  // inside a row
      CHECK(b.dense_index(at[j]) < b.covered());
      dense.insert(b.dense_index(at[j]));
    }
    CHECK(dense.size() == b.members.size());
    CHECK(std::is_sorted(b.members.begin(), b.members.end()));
  }
  CHECK(std::count(taken.begin(), taken.end(), 1) == static_cast<long>(at.size()));
  return blocks;
}

Positions column(std::size_t m, std::size_t n, std::size_t col) {
  Positions at;
  for (std::size_t r = 0; r < m; ++r) at.push_back(r * n + col);
  return at;
}

}  // namespace

TEST_CASE("a run is one plain copy; none for no positions") {
  CHECK(checked_blocks({}, 10, 4).empty());
  Positions row;
  for (std::size_t i = 300; i < 4396; ++i) row.push_back(i);
  const auto blocks = checked_blocks(row, 5000, 4);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].rows == 1);
  CHECK(blocks[0].covered() == row.size());
}

TEST_CASE("a product's changed column, whole or a random part, is one pitched copy") {
  const std::size_t m = 2048, n = 65536;  // a row of f32 is 256 KiB: no span joins two
  const Positions col = column(m, n, 777);
  auto blocks = checked_blocks(col, m * n, 4);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].rows == m);
  CHECK(blocks[0].pitch == n);
  CHECK(blocks[0].width == 1);
  std::mt19937 rng(7);
  Positions part;  // what a check leaves unevaluated: about 15 in 16 of its elements
  for (std::size_t i : col)
    if (rng() % 16 != 0) part.push_back(i);
  blocks = checked_blocks(part, m * n, 4);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].pitch == n);
  // Two columns and a row, as four changes make: a copy or two each, not one an element.
  Positions mixed = col;
  for (std::size_t i : column(m, n, 40000)) mixed.push_back(i);
  for (std::size_t i = 0; i < n; ++i) mixed.push_back(5 * n + i);
  std::sort(mixed.begin(), mixed.end());
  mixed.erase(std::unique(mixed.begin(), mixed.end()), mixed.end());
  CHECK(checked_blocks(mixed, m * n, 4, {n}).size() == 3);
}

TEST_CASE("a narrow product's column takes few copies") {
  for (std::size_t n : {std::size_t{4}, std::size_t{100}, std::size_t{1024}, std::size_t{5000}}) {
    INFO("N = " << n);
    CHECK(checked_blocks(column(4096, n, n / 2), 4096 * n, 2, {n}).size() <= 2);
  }
}

TEST_CASE("a long scan's rests of rows are a copy each, the rows between them left alone") {
  const std::size_t n = 32768;
  Positions at;
  const std::size_t rows[] = {100, 5000, 20000, 30000}, from[] = {17, 4000, 32000, 9};
  for (int k = 0; k < 4; ++k)
    for (std::size_t c = from[k]; c < n; ++c) at.push_back(rows[k] * n + c);
  CHECK(checked_blocks(at, n * n, 4, {n}).size() <= 4);
}

TEST_CASE("a convolution's changed window: a pitched copy per channel at most") {
  // out[0, c, 10:14, 20:27] of (64, 56, 56): 64 windows of 4 rows of 7.
  Positions at;
  for (std::size_t c = 0; c < 64; ++c)
    for (std::size_t h = 10; h < 14; ++h)
      for (std::size_t w = 20; w < 27; ++w) at.push_back((c * 56 + h) * 56 + w);
  CHECK(checked_blocks(at, 64 * 56 * 56, 4, kq::row_major_pitches({64, 56, 56})).size() <= 64);
}

TEST_CASE("random positions keep every promise") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 200000, es = std::size_t{1} << (rng() % 4);
    std::set<std::size_t> s;
    const std::size_t count = rng() % 3000;
    const bool clustered = trial % 2 == 0;
    for (std::size_t k = 0; k < count; ++k) {
      std::size_t i = rng() % n;
      if (clustered) i = (i / 97) * 97 % n;  // on a lattice, as columns are
      s.insert(i);
    }
    INFO("trial " << trial << ": " << s.size() << " of " << n << ", " << es << " bytes");
    checked_blocks(Positions(s.begin(), s.end()), n, es, {97, 1 + rng() % 5000, 1});
  }
}

TEST_CASE("row_major_pitches: a row, a plane, ... above 1") {
  CHECK(kq::row_major_pitches({2048, 4096}) == std::vector<std::size_t>{4096});
  CHECK(kq::row_major_pitches({8, 64, 56, 56}) == std::vector<std::size_t>{56, 3136, 200704});
  CHECK(kq::row_major_pitches({7, 1, 1}).empty());
  CHECK(kq::row_major_pitches({}).empty());
}

TEST_CASE("positions out of order, repeated or past the end are refused") {
  CHECK_THROWS_AS(kq::copy_blocks({3, 2}, 10, 4), std::invalid_argument);
  CHECK_THROWS_AS(kq::copy_blocks({3, 3}, 10, 4), std::invalid_argument);
  CHECK_THROWS_AS(kq::copy_blocks({10}, 10, 4), std::invalid_argument);
}
