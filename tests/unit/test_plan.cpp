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

namespace {

const std::vector<std::int64_t> kShippedTimingSizes = {4096, 65536, 1048576, 16777216, 268435456};

kq::Spec timed_spec() {
  auto spec = kq::test::residual_relu_spec();
  spec.timing.sizes = kShippedTimingSizes;
  return spec;
}

std::vector<std::int64_t> timing_case_sizes(const std::vector<kq::Case>& cases) {
  std::vector<std::int64_t> sizes;
  for (const auto& c : cases)
    if (c.group == "timing") sizes.push_back(c.numel());
  return sizes;
}

std::size_t position(const std::vector<kq::Case>& cases, const std::string& name) {
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i].name == name) return i;
  FAIL("no case " << name);
  return 0;
}

}  // namespace

TEST_CASE("every timed size is an in-contract case with every value class") {
  const auto cases = kq::plan_cases(timed_spec());
  CHECK(timing_case_sizes(cases) == kShippedTimingSizes);
  for (const auto& c : cases) {
    if (c.group != "timing") continue;
    INFO(c.name);
    CHECK(c.name == "timing/" + std::to_string(c.numel()));
    CHECK(c.in_contract);
    CHECK(c.values == kq::ValueClass::sprinkled);
    CHECK(c.shape == std::vector<std::int64_t>{c.numel()});  // rank 1, the smallest admitted
  }
  // With ranks [2, 3] the smallest admitted rank holds it.
  auto ranked =
      kq::test::residual_relu_spec("layouts:\n  contiguous_only: true\n  ranks: [2, 3]\n");
  auto m = by_name(kq::plan_cases(ranked));
  CHECK(m["timing/4096"].shape == std::vector<std::int64_t>{1, 4096});
  CHECK(m["timing/4096"].in_contract);
}

TEST_CASE("--quick qualifies the timed sizes up to 2^20 + 3 elements only") {
  const auto cases = kq::plan_cases(timed_spec(), {true, true});
  CHECK(timing_case_sizes(cases) == std::vector<std::int64_t>{4096, 65536, 1048576});
}

TEST_CASE("kq run --sizes: the sizes given are qualified instead of the spec's") {
  kq::PlanOptions o;
  o.timing_sizes = {1 << 22, 1000, 4097, 1 << 22};
  const auto cases = kq::plan_cases(timed_spec(), o);
  // 4097 is a size case already; duplicates are planned once; below 4096, mixed values.
  CHECK(timing_case_sizes(cases) == std::vector<std::int64_t>{1000, 1 << 22});
  auto m = by_name(cases);
  CHECK(m["timing/1000"].values == kq::ValueClass::mixed);
  CHECK(m["timing/4194304"].values == kq::ValueClass::sprinkled);
  std::set<std::string> names;
  for (const auto& c : cases) CHECK_MESSAGE(names.insert(c.name).second, c.name);
  o.quick = true;
  CHECK(timing_case_sizes(kq::plan_cases(timed_spec(), o)) == std::vector<std::int64_t>{1000});
}

TEST_CASE("every size case from 4096 elements up is sprinkled, the smaller ones mixed") {
  auto spec = timed_spec();
  spec.qualification.extra_sizes = {4099, 1000003};
  int sprinkled = 0;
  for (const auto& c : kq::plan_cases(spec)) {
    if (c.group != "size") continue;
    INFO(c.name);
    CHECK(c.values == (c.numel() >= 4096 ? kq::ValueClass::sprinkled : kq::ValueClass::mixed));
    sprinkled += c.values == kq::ValueClass::sprinkled;
  }
  CHECK(sprinkled == 7);  // 4097, 4099, 65537, 2^20 + 3, 1000003, 2^24 + 1, 2^31 + 5
  // The value-class cases stay as they were.
  auto m = by_name(kq::plan_cases(spec));
  CHECK(m["values/mixed_1"].values == kq::ValueClass::mixed);
  CHECK(m["values/denormal"].values == kq::ValueClass::denormal);
  CHECK(m["values/denormal"].numel() == 4097);
}

TEST_CASE("sprinkled cases know the domain and the bound") {
  auto finite = by_name(kq::plan_cases(kq::test::residual_relu_spec()));
  CHECK(!finite["size/65537"].ieee_specials);
  CHECK(finite["size/65537"].max_abs_input == 0);
  CHECK(finite["size/65537"].scale == 1.0);
  auto ieee = by_name(kq::plan_cases(kq::test::residual_relu_spec("", "", "ieee")));
  CHECK(ieee["size/65537"].ieee_specials);
  auto bounded_spec = kq::test::residual_relu_spec();
  bounded_spec.qualification.max_abs_input = 0.25;
  auto bounded = by_name(kq::plan_cases(bounded_spec));
  CHECK(bounded["size/65537"].max_abs_input == 0.25);
  CHECK(bounded["size/65537"].scale == 0.25);
}

TEST_CASE("one conduct case, right after the size cases; timing cases after it") {
  const auto cases = kq::plan_cases(timed_spec());
  int conduct = 0;
  for (const auto& c : cases) conduct += c.conduct;
  CHECK(conduct == 1);
  const std::size_t at = position(cases, "conduct/65537");
  const kq::Case& c = cases[at];
  CHECK(c.group == "conduct");
  CHECK(c.in_contract);
  CHECK(c.conduct);
  CHECK(c.values == kq::ValueClass::sprinkled);
  CHECK(c.numel() == 65537);
  REQUIRE(at > 0);
  CHECK(cases[at - 1].name == "size/" + std::to_string((1 << 24) + 1));
  CHECK(cases[at + 1].name == "timing/4096");
  CHECK(position(cases, "timing/268435456") < position(cases, "rank/1031"));
  // A timed size above 2^28 takes turns at the machine: it comes last, before the huge case.
  kq::PlanOptions o;
  o.timing_sizes = {4096, std::int64_t{1} << 29};
  const auto big = kq::plan_cases(timed_spec(), o);
  CHECK(big[big.size() - 2].name == "timing/536870912");
  CHECK(big.back().name == "size/" + std::to_string((1LL << 31) + 5));
  CHECK(position(big, "timing/4096") == position(big, "conduct/65537") + 1);
}
