// Several workers sharing one arm's cases take them a shape at a time through one counter file.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "plan/plan_cases.hpp"
#include "qualify/case_claims.hpp"
#include "spec_fixture.hpp"
#include "test_support.hpp"

namespace {

kq::Case shaped(std::vector<std::int64_t> dims, const char* name) {
  kq::Case c;
  c.name = name;
  c.dims = std::move(dims);
  c.shape = {99};  // the largest tensor's shape: format 2 groups by dims
  return c;
}

}  // namespace

TEST_CASE("shape_groups: the plan's cases by shape, in the order of each shape's first case") {
  const std::vector<kq::Case> cases = {shaped({3, 4097}, "a"), shaped({1, 1}, "b"),
                                       shaped({3, 4097}, "c"), shaped({7, 5}, "d"),
                                       shaped({1, 1}, "e")};
  const auto groups = kq::shape_groups(cases);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0] == std::vector<std::size_t>{0, 2});
  CHECK(groups[1] == std::vector<std::size_t>{1, 4});
  CHECK(groups[2] == std::vector<std::size_t>{3});

  kq::Case flat;  // format 1: by shape
  flat.shape = {1025};
  CHECK(kq::shape_groups({flat, flat}).size() == 1);
}

TEST_CASE("workers sharing a claims file take every case once, each shape in one worker") {
  const kq::Spec spec = kq::test::residual_relu_spec();
  const auto cases = kq::plan_cases(spec, {false, true});
  const auto file = kq::test::temp_dir("case-claims") / "claims";
  kq::CaseClaims::create(file);
  // Three workers (three mappings of the file), taking turns unevenly: the first takes two
  // cases for each one of the others'.
  kq::CaseClaims w0(file, cases), w1(file, cases), w2(file, cases);
  std::vector<kq::CaseClaims*> turns = {&w0, &w0, &w1, &w2};
  std::vector<std::vector<std::size_t>> taken(3);
  std::set<std::size_t> open = {0, 1, 2};
  for (std::size_t t = 0; !open.empty(); ++t) {
    kq::CaseClaims* w = turns[t % turns.size()];
    const std::size_t k = w == &w0 ? 0 : w == &w1 ? 1 : 2;
    if (!open.count(k)) continue;
    if (const auto i = w->next())
      taken[k].push_back(*i);
    else
      open.erase(k);
  }
  std::map<std::size_t, int> times;
  std::map<std::vector<std::int64_t>, std::set<std::size_t>> workers_of_shape;
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK_FALSE(taken[k].empty());
    for (std::size_t i : taken[k]) {
      ++times[i];
      workers_of_shape[cases[i].shape].insert(k);
    }
  }
  CHECK(times.size() == cases.size());
  for (const auto& [i, n] : times) CHECK_MESSAGE(n == 1, cases[i].name);
  for (const auto& [shape, workers] : workers_of_shape) CHECK(workers.size() == 1);
  CHECK(taken[0].size() > taken[1].size());  // who asks more often gets more

  kq::CaseClaims late(file, cases);  // every group taken
  CHECK_FALSE(late.next().has_value());
}

TEST_CASE("a claims file that cannot be opened is an error naming it") {
  const auto missing = kq::test::temp_dir("case-claims-missing") / "nowhere" / "claims";
  CHECK_THROWS_WITH_AS(kq::CaseClaims(missing, {}), doctest::Contains("nowhere/claims"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(kq::CaseClaims::create(missing), doctest::Contains("nowhere/claims"),
                       std::runtime_error);
}
