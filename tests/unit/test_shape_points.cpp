// The shape points of a format-2 spec: each dim's candidate values, every pair of two dims'
// values covered (not their full product), quick mode's bound, the huge set, the spec's own
// points merged in, ordered by size, deterministic.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "plan/shape_points.hpp"
#include "spec/spec.hpp"

namespace fs = std::filesystem;
namespace ix = kq::ix;
using kq::DType;
using kq::ShapedContract;
using kq::ShapePlanOptions;
using kq::ShapePoint;

namespace {

const fs::path kV2 = fs::path(KQ_SOURCE_DIR) / "tests/data/specs_v2";

ShapedContract load(const char* name) {
  auto s = kq::load_spec(kV2 / name);
  REQUIRE(s.shaped.has_value());
  return *s.shaped;
}

// x[dims...] -> y[dims...], the given kinds.
ShapedContract contract(const std::vector<std::pair<std::string, ix::DimKind>>& dims) {
  auto program = std::make_shared<ix::Program>();
  std::vector<ix::Extent> shape;
  for (const auto& [n, k] : dims) {
    program->decls.dims.push_back({n, k});
    shape.emplace_back(n);
  }
  program->decls.tensors.push_back({"x", ix::Role::input, DType::f32, shape});
  program->decls.tensors.push_back({"y", ix::Role::output, DType::f32, shape});
  ShapedContract c;
  c.program = program;
  return c;
}

std::vector<std::int64_t> values(const ShapePoint& p) {
  std::vector<std::int64_t> v;
  for (const auto& [n, x] : p.dims) v.push_back(x);
  return v;
}

// Every pair of candidate values of every two dims within `limit` elements is in some point.
void check_pairs(const ShapedContract& c, const std::vector<ShapePoint>& pts, bool quick,
                 std::int64_t limit = kq::kHugePointElements) {
  const auto& dims = c.program->decls.dims;
  std::set<std::tuple<std::size_t, std::int64_t, std::size_t, std::int64_t>> seen;
  for (const auto& p : pts) {
    const auto v = values(p);
    for (std::size_t i = 0; i < v.size(); ++i)
      for (std::size_t j = i + 1; j < v.size(); ++j) seen.insert({i, v[i], j, v[j]});
  }
  for (std::size_t i = 0; i < dims.size(); ++i)
    for (std::size_t j = i + 1; j < dims.size(); ++j)
      for (auto a : kq::shape_candidates(dims[i].kind, quick))
        for (auto b : kq::shape_candidates(dims[j].kind, quick)) {
          std::vector<std::int64_t> p(dims.size(), 1);
          p[i] = a;
          p[j] = b;
          if (kq::largest_tensor_elements(c, p) > limit) continue;
          INFO(dims[i].name << "=" << a << ", " << dims[j].name << "=" << b);
          CHECK(seen.count({i, a, j, b}) == 1);
        }
}

void check_common(const ShapedContract& c, const std::vector<ShapePoint>& pts) {
  std::set<std::vector<std::int64_t>> distinct;
  std::int64_t prev = 0;
  for (const auto& p : pts) {
    const auto v = values(p);
    CHECK(distinct.insert(v).second);
    const auto n = kq::largest_tensor_elements(c, v);
    CHECK(n <= kq::kMaxPointElements);
    CHECK(n >= prev);  // largest last
    prev = n;
    REQUIRE(p.dims.size() == c.program->decls.dims.size());
    for (std::size_t i = 0; i < p.dims.size(); ++i)
      CHECK(p.dims[i].first == c.program->decls.dims[i].name);
  }
}

}  // namespace

TEST_CASE("candidates: small, primes, around the block widths, a large prime, long rows") {
  const auto f = kq::shape_candidates(ix::DimKind::free, false);
  const auto r = kq::shape_candidates(ix::DimKind::reduced, false);
  for (std::int64_t x : {1,    2,    3,    5,    7,    31,   32,   33,   127,  128,  129,
                         1023, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193, 65521}) {
    CHECK(std::count(f.begin(), f.end(), x) == 1);
    CHECK(std::count(r.begin(), r.end(), x) == 1);
  }
  CHECK(std::count(r.begin(), r.end(), (1 << 20) + 3) == 1);
  CHECK(std::count(f.begin(), f.end(), (1 << 20) + 3) == 0);
  const auto q = kq::shape_candidates(ix::DimKind::reduced, true);
  CHECK(q.back() == 4097);
}

TEST_CASE("one dim: each value once, plus the huge set in full mode") {
  const auto c = contract({{"N", ix::DimKind::reduced}});
  const auto pts = kq::plan_shape_points(c, {});
  check_common(c, pts);
  std::vector<std::int64_t> plain;
  for (const auto& p : pts)
    if (!p.huge) plain.push_back(p.dims[0].second);
  CHECK(plain == kq::shape_candidates(ix::DimKind::reduced, false));
  CHECK(std::count_if(pts.begin(), pts.end(), [](auto& p) { return p.huge; }) == 2);
  CHECK(pts.back().huge);
  CHECK(pts.back().dims[0].second > (std::int64_t{1} << 31));

  const auto quick = kq::plan_shape_points(c, {.quick = true});
  std::vector<std::int64_t> qv;
  for (const auto& p : quick) qv.push_back(p.dims[0].second);
  CHECK(qv == kq::shape_candidates(ix::DimKind::reduced, true));
}

TEST_CASE("softmax (M free, N reduced): pairs covered, quick bounded, huge set, spec points") {
  const auto c = load("softmax.yaml");
  const auto full = kq::plan_shape_points(c, {});
  const auto quick = kq::plan_shape_points(c, {.quick = true});
  MESSAGE("softmax: " << quick.size() << " points quick, " << full.size() << " full");
  check_common(c, full);
  check_common(c, quick);
  check_pairs(c, full, false);
  check_pairs(c, quick, true);

  for (const auto& p : quick) {  // the timing points aside: what is timed is qualified
    CHECK_FALSE(p.huge);
    if (p.timed) continue;
    for (const auto& [n, x] : p.dims) CHECK(x <= 4097);
  }
  CHECK(std::count_if(quick.begin(), quick.end(), [](const ShapePoint& p) { return p.timed; }) ==
        2);

  // The huge set: a short row that starts past 2^31 (so a 32-bit row offset wraps), and one row
  // beyond 2^20.
  const auto at = [](const ShapePoint& p, int i) {
    return p.dims[static_cast<std::size_t>(i)].second;
  };
  CHECK(std::any_of(full.begin(), full.end(), [&](auto& p) {
    return p.huge && (at(p, 0) - 1) * at(p, 1) >= (std::int64_t{1} << 31) && at(p, 1) <= 4097;
  }));
  CHECK(std::any_of(full.begin(), full.end(),
                    [&](auto& p) { return p.huge && at(p, 0) == 1 && at(p, 1) > (1 << 20); }));
  for (const auto& p : full)
    if (!p.huge) CHECK(kq::largest_tensor_elements(c, values(p)) <= (std::int64_t{1} << 31));

  // The spec's points: qualification {1,1} and {7,4099}, timing 32768x4096 and 4096x16384.
  const auto find = [&](const std::vector<ShapePoint>& pts, std::int64_t m, std::int64_t n) {
    return std::find_if(pts.begin(), pts.end(),
                        [&](auto& p) { return at(p, 0) == m && at(p, 1) == n; });
  };
  for (auto [m, n] : {std::pair{1, 1}, std::pair{7, 4099}}) {
    auto it = find(full, m, n);
    REQUIRE(it != full.end());
    CHECK(it->from_spec);
  }
  for (auto [m, n] : {std::pair{32768, 4096}, std::pair{4096, 16384}}) {
    auto it = find(full, m, n);
    REQUIRE(it != full.end());
    CHECK(it->timed);
  }
  CHECK(find(full, 7, 4099)->name == "M=7,N=4099");
  CHECK(find(quick, 1, 1)->from_spec);
  CHECK(find(quick, 7, 4099) == quick.end());  // 4099 > 4097, and said so:
  CHECK(kq::quick_left_out(c) == std::vector<std::string>{"M=7,N=4099"});

  // Deterministic.
  CHECK(kq::plan_shape_points(c, {}) == full);
  CHECK(kq::plan_shape_points(c, {.quick = true}) == quick);
}

TEST_CASE("layer_norm: the timing grid is qualified") {
  const auto c = load("layer_norm.yaml");
  const auto full = kq::plan_shape_points(c, {});
  check_common(c, full);
  check_pairs(c, full, false);
  for (std::int64_t m : {4096, 32768}) {
    auto it = std::find_if(full.begin(), full.end(), [&](auto& p) {
      return p.dims[0].second == m && p.dims[1].second == 4096;
    });
    REQUIRE(it != full.end());
    CHECK(it->timed);
  }
}

TEST_CASE("four dims: every pair covered, far fewer points than the product") {
  const auto c = contract({{"B", ix::DimKind::free},
                           {"H", ix::DimKind::free},
                           {"M", ix::DimKind::free},
                           {"N", ix::DimKind::reduced}});
  for (bool q : {true, false}) {
    const auto pts = kq::plan_shape_points(c, {.quick = q});
    check_common(c, pts);
    check_pairs(c, pts, q);
    std::int64_t product = 1;
    for (const auto& d : c.program->decls.dims)
      product *= static_cast<std::int64_t>(kq::shape_candidates(d.kind, q).size());
    MESSAGE("4 dims, quick=" << q << ": " << pts.size() << " points, product " << product);
    CHECK(static_cast<std::int64_t>(pts.size()) * 50 < product);
    CHECK(kq::plan_shape_points(c, {.quick = q}) == pts);
  }
}

// Each point starts from the uncovered pair with the least room (its own point's tensor the
// largest) and sets next whichever dim and value cover most: a pair of two large values left
// for late took a point of its own. Taking the first uncovered pair and the dims in order,
// KernelBench's quick plans of three to five dims (one tensor over all) had 338, 552 and 840
// points, every pair covered either way; the bounds below leave 5% over what the walk makes.
TEST_CASE("pairs with the least room first: quick plans of 3 to 5 dims stay small") {
  const std::vector<std::pair<std::string, ix::DimKind>> all = {{"A", ix::DimKind::free},
                                                                {"B", ix::DimKind::free},
                                                                {"C", ix::DimKind::free},
                                                                {"D", ix::DimKind::free},
                                                                {"E", ix::DimKind::free}};
  for (const auto& [k, most] : {std::pair{3, 240}, std::pair{4, 460}, std::pair{5, 750}}) {
    const auto c = contract({all.begin(), all.begin() + k});
    // Quick plans keep a pair's point within 2^16 elements (plan_cases).
    const std::int64_t limit = std::int64_t{1} << 16;
    const auto pts = kq::plan_shape_points(c, {.quick = true, .max_elements = limit});
    check_common(c, pts);
    check_pairs(c, pts, true, limit);
    MESSAGE(k << " dims, quick: " << pts.size() << " points");
    CHECK(static_cast<int>(pts.size()) <= most);
  }
}
