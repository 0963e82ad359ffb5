// Case planning: names, sizes, and classification by the spec's contract.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "plan/plan_cases.hpp"
#include "spec_fixture.hpp"

namespace {

std::map<std::string, kq::Case> by_name(const std::vector<kq::Case>& cases) {
  std::map<std::string, kq::Case> m;
  for (const auto& c : cases) m[c.name] = c;
  return m;
}

}  // namespace

TEST_CASE("case names are unique and seeds reproducible") {
  auto spec = kq::test::residual_relu_spec();
  auto a = kq::plan_cases(spec);
  auto b = kq::plan_cases(spec);
  std::set<std::string> names;
  for (const auto& c : a) CHECK_MESSAGE(names.insert(c.name).second, c.name);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].seed == b[i].seed);
}

TEST_CASE("the issue's sizes are all there, the huge one above 2^31") {
  auto m = by_name(kq::plan_cases(kq::test::residual_relu_spec()));
  for (long long n : {0LL,
                      1LL,
                      2LL,
                      3LL,
                      4LL,
                      5LL,
                      7LL,
                      8LL,
                      31LL,
                      32LL,
                      33LL,
                      127LL,
                      128LL,
                      129LL,
                      255LL,
                      256LL,
                      257LL,
                      1023LL,
                      1024LL,
                      1025LL,
                      4095LL,
                      4097LL,
                      65537LL,
                      (1LL << 20) + 3,
                      (1LL << 24) + 1,
                      (1LL << 31) + 5})
    CHECK_MESSAGE(m.count("size/" + std::to_string(n)), n);
  auto quick = by_name(kq::plan_cases(kq::test::residual_relu_spec(), {true, true}));
  CHECK(!quick.count("size/" + std::to_string((1LL << 31) + 5)));
  // The huge case comes last: every other case has its result whatever happens to it.
  CHECK(kq::plan_cases(kq::test::residual_relu_spec()).back().name ==
        "size/" + std::to_string((1LL << 31) + 5));
}

TEST_CASE("contiguous-only spec: strided, transposed, broadcast and aliasing are outside") {
  auto m = by_name(kq::plan_cases(kq::test::residual_relu_spec()));
  for (const char* n :
       {"layout/x_stride2", "layout/residual_transposed", "layout/out_stride2",
        "layout/x_broadcast", "alias/out_is_x", "alias/out_overlaps_residual", "rank/2x3x1x5x7"}) {
    REQUIRE_MESSAGE(m.count(n), n);
    CHECK_MESSAGE(!m[n].in_contract, n);
    CHECK(!m[n].outside_because.empty());
  }
  for (const char* n :
       {"offset/x+4", "offset/residual+12", "offset/out+8", "rank/3x5x67", "values/nan_in_x"}) {
    if (!m.count(n)) continue;  // nan cases exist only in the ieee domain
    CHECK_MESSAGE(m[n].in_contract, n);
  }
  CHECK(!m.count("values/nan_in_x"));
  CHECK(m.count("values/cancel"));
  CHECK(m.count("values/negative_zero"));
  CHECK(m.count("values/denormal"));
  CHECK(m.count("values/overflow"));
}

TEST_CASE("a strided, in-place, 16-byte aligned ieee spec classifies the other way") {
  auto spec = kq::test::residual_relu_spec(
      "layouts:\n  contiguous_only: false\n  min_alignment_bytes: 16\n  ranks: [1, 2]\n",
      "    may_alias: [x]\n", "ieee");
  auto m = by_name(kq::plan_cases(spec));
  CHECK(m["layout/x_stride2"].in_contract);
  CHECK(m["layout/residual_broadcast"].in_contract);
  CHECK(m["alias/out_is_x"].in_contract);
  CHECK(!m["alias/out_is_residual"].in_contract);
  CHECK(!m["alias/out_overlaps_x"].in_contract);
  CHECK(!m["offset/x+4"].in_contract);
  CHECK(!m["rank/3x5x67"].in_contract);
  CHECK(m.count("values/nan_in_residual"));
  CHECK(m.count("values/inf_in_x"));
}
