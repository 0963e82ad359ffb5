// kq run --points (plan/choose_points.hpp): timing-point numbers and dim maps against a format-2
// spec, points it lacks added after its own and then timed and qualified; sizes and {n: ...}
// for format 1; every bad value refused with the option, the value and what is wrong.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "plan/choose_points.hpp"
#include "plan/plan_cases.hpp"
#include "plan/timed_points.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(KQ_SOURCE_DIR);

kq::Spec softmax() { return kq::load_spec(kRoot / "tests/data/specs_v2/softmax.yaml"); }

// The message choose_points throws for `texts`, or "" when it accepts them.
std::string refusal(const kq::Spec& spec, const std::vector<std::string>& texts) {
  try {
    kq::choose_points(spec, texts);
  } catch (const kq::PointsError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("format 2: timing points by number, by dim values or by label; each once") {
  const kq::Spec spec = softmax();  // points 1: M=32768,N=4096 and 2: M=4096,N=16384
  CHECK(kq::choose_points(spec, {"2"}).keys == std::vector<std::int64_t>{2});
  CHECK(kq::choose_points(spec, {"2,1"}).keys == std::vector<std::int64_t>{2, 1});
  const auto c = kq::choose_points(spec, {"{M: 4096, N: 16384}", "M=32768,N=4096", "2"});
  CHECK(c.keys == std::vector<std::int64_t>{2, 1});
  CHECK(c.added.empty());
  CHECK(kq::choose_points(spec, {"{N:16384,M:4096}"}).keys == std::vector<std::int64_t>{2});
  CHECK(kq::choose_points(spec, {"{M: 2^12, N: 2^14}"}).keys == std::vector<std::int64_t>{2});
}

TEST_CASE("format 2: points the spec lacks are added after its own, then timed and qualified") {
  kq::Spec spec = softmax();
  const auto c =
      kq::choose_points(spec, {"{M: 3, N: 50257}", "{M: 4096, N: 4096}", "M=3,N=50257", "1"});
  CHECK(c.keys == std::vector<std::int64_t>{3, 4, 1});
  REQUIRE(c.added.size() == 2);
  CHECK(c.added[0].dims == std::vector<std::int64_t>{3, 50257});
  CHECK(c.added[1].dims == std::vector<std::int64_t>{4096, 4096});

  kq::add_timing_points(spec, c.added);
  REQUIRE(spec.shaped->timing_points.size() == 4);
  const auto timed = kq::timed_points(spec, c.keys);
  REQUIRE(timed.size() == 3);  // in the spec's order, then the added ones
  CHECK(timed[0].point == "M=32768,N=4096");
  CHECK(timed[1].point == "M=3,N=50257");
  CHECK(timed[1].size == 3);
  CHECK(timed[1].bytes == 2.0 * 2 * 3 * 50257);
  CHECK(timed[2].point == "M=4096,N=4096");

  // Qualified too, quick or not: the added point is a timing case of the plan; the spec's
  // points not chosen are not.
  kq::PlanOptions plan;
  plan.quick = true;
  plan.timing_sizes = c.keys;
  const auto cases = kq::plan_cases(spec, plan);
  auto named = [&](const std::string& name) {
    return std::any_of(cases.begin(), cases.end(),
                       [&](const kq::Case& k) { return k.name == name; });
  };
  CHECK(named("timing/M=3,N=50257"));
  CHECK(named("timing/M=4096,N=4096"));
  CHECK(named("timing/M=32768,N=4096"));
  CHECK_FALSE(named("timing/M=4096,N=16384"));
}

TEST_CASE("a timed point's data follows the point, not its number") {
  kq::Spec a = softmax(), b = softmax();
  kq::add_timing_points(a, {{{8, 8}}});
  kq::add_timing_points(b, {{{5, 5}}, {{8, 8}}});
  CHECK(kq::timed_points(a, {3})[0].c.seed == kq::timed_points(b, {4})[0].c.seed);
  CHECK(kq::timed_points(a, {3})[0].c.seed != kq::timed_points(b, {3})[0].c.seed);
}

TEST_CASE("format 2: a bad --points names the option, the value and the wrong dim") {
  const kq::Spec spec = softmax();
  auto says = [&](const std::string& text, const std::string& part) {
    const std::string m = refusal(spec, {text});
    INFO(text << " -> " << m);
    CHECK(has(m, "--points '" + text + "': "));
    CHECK(has(m, part));
  };
  says("{M: 4096}", "N is not given (every dim is: M, N)");
  says("{M: 4096, K: 3}", "softmax has no dim K; its dims: M, N");
  says("{m: 4096, N: 3}", "softmax has no dim m (did you mean M?)");
  says("{M: 0, N: 4}", "M must be a positive integer (4096 or 2^12), not '0'");
  says("{M: -3, N: 4}", "M must be a positive integer");
  says("{M: 1.5, N: 4}", "not '1.5'");
  says("{M: x, N: 4}", "not 'x'");
  says("{M: 1, M: 2, N: 3}", "M is given twice");
  says("{M: 2^21, N: 2^20}", "more than 2^40 elements");
  says("{M 4, N: 3}", "'M 4' is not NAME: VALUE");
  says("{M: 4, N: 3", "a flow map ends with '}'");
  says("{}", "no dim given");
  says("3", "'3' is not a timing point's number: softmax has 2 (1 to 2)");
  says("3", "{M: 32768, N: 4096}");
  says("0", "'0' is not a timing point's number");
  says("one", "'one' is not a timing point's number");
  says("", "no point given");
  CHECK(refusal(spec, {"1", "{M: 2, N: 2}"}).empty());
}

TEST_CASE("format 1: --points takes sizes, or the one dim n") {
  const kq::Spec spec = kq::load_spec(kRoot / "specs/residual_relu.yaml");
  CHECK(kq::choose_points(spec, {"4096,2^20"}).keys == std::vector<std::int64_t>{4096, 1 << 20});
  const auto c = kq::choose_points(spec, {"{n: 1048576}", "n=4096", "4096"});
  CHECK(c.keys == std::vector<std::int64_t>{1 << 20, 4096});
  CHECK(c.added.empty());
  CHECK(kq::example_point(spec) == "{n: 4096}");
  CHECK(has(refusal(spec, {"{N: 4096}"}),
            "residual_relu is a format-1 spec: its one dim is n, the element count, not N"));
  CHECK(has(refusal(spec, {"0"}), "'0' is not an element count (4096 or 2^12)"));
  CHECK(has(refusal(spec, {"2^41"}), "2^41 is above 2^40 elements"));
}
