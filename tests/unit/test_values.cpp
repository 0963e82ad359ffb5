// Input values: the sprinkled class carries every special value the spec admits, at the large
// sizes too, reproducibly; the bound and the domain keep out what the spec does not admit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "plan/plan_cases.hpp"
#include "qualify/values.hpp"
#include "spec_fixture.hpp"

namespace {

kq::Case case_named(const kq::Spec& spec, const std::string& name) {
  for (const auto& c : kq::plan_cases(spec, {false, true}))
    if (c.name == name) return c;
  FAIL("no case " << name);
  return {};
}

template <typename T>
std::vector<T> values_of(const kq::Case& c, int input, std::uint64_t generation = 0) {
  constexpr kq::DType dtype = sizeof(T) == 4 ? kq::DType::f32 : kq::DType::f64;
  std::vector<T> v(static_cast<std::size_t>(c.numel()));
  kq::fill_input_values(c, input, dtype, v.data(), c.numel(), generation);
  return v;
}

// How often each special occurs in a case's two inputs.
struct Census {
  std::int64_t elements = 0;
  std::int64_t special = 0;  // any of the below
  std::int64_t negative_zero = 0, positive_zero = 0, subnormal = 0, smallest_normal = 0,
               half_smallest_normal = 0, smallest_subnormal = 0, huge = 0, near_max = 0, nan = 0,
               negative_nan = 0, inf = 0, negative_inf = 0;
  std::int64_t overflowing_sums = 0;  // x + residual is inf although both are finite
  double max_abs = 0;                 // over the finite values
};

template <typename T>
Census census(const kq::Case& c) {
  using L = std::numeric_limits<T>;
  const std::vector<T> x = values_of<T>(c, 0), r = values_of<T>(c, 1);
  Census n;
  auto count = [&](T v) {
    ++n.elements;
    const bool is_special =
        v == 0 || !std::isfinite(v) || std::fabs(v) < L::min() * 1.0001 || std::fabs(v) >= 1e20;
    n.special += is_special;
    if (v == 0) (std::signbit(v) ? n.negative_zero : n.positive_zero)++;
    if (std::fpclassify(v) == FP_SUBNORMAL) ++n.subnormal;
    if (std::fabs(v) == L::denorm_min()) ++n.smallest_subnormal;
    if (std::fabs(v) == L::min()) ++n.smallest_normal;
    if (std::fabs(v) == L::min() / 2) ++n.half_smallest_normal;
    if (std::isfinite(v) && std::fabs(v) >= 1e20 && std::fabs(v) <= 2e20) ++n.huge;
    if (std::isfinite(v) && std::fabs(v) >= 0.6 * L::max()) ++n.near_max;
    if (std::isnan(v)) (std::signbit(v) ? n.negative_nan : n.nan)++;
    if (std::isinf(v)) (std::signbit(v) ? n.negative_inf : n.inf)++;
    if (std::isfinite(v)) n.max_abs = std::max(n.max_abs, static_cast<double>(std::fabs(v)));
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    count(x[i]);
    count(r[i]);
    if (std::isfinite(x[i]) && std::isfinite(r[i]) && std::isinf(x[i] + r[i])) ++n.overflowing_sums;
  }
  return n;
}

template <typename T>
void check_every_finite_special(const Census& n) {
  CHECK(n.negative_zero > 1000);
  CHECK(n.positive_zero > 1000);
  CHECK(n.subnormal > 1000);
  CHECK(n.smallest_subnormal > 100);
  CHECK(n.smallest_normal > 100);
  CHECK(n.half_smallest_normal > 100);
  CHECK(n.huge > 1000);
  CHECK(n.near_max > 1000);
  CHECK(n.overflowing_sums > 1000);
  // About 1 element in 8 is special; the rest is the mixed background.
  const double share = static_cast<double>(n.special) / static_cast<double>(n.elements);
  CHECK(share > 0.05);
  CHECK(share < 0.2);
}

}  // namespace

TEST_CASE("a sprinkled case at 2^20 + 3 elements holds every finite special, and no NaN or inf") {
  const kq::Case c = case_named(kq::test::residual_relu_spec(), "size/1048579");
  REQUIRE(c.values == kq::ValueClass::sprinkled);
  SUBCASE("f32") {
    const Census n = census<float>(c);
    check_every_finite_special<float>(n);
    CHECK(n.nan + n.negative_nan + n.inf + n.negative_inf == 0);
  }
  SUBCASE("f64") {
    const Census n = census<double>(c);
    check_every_finite_special<double>(n);
    CHECK(n.nan + n.negative_nan + n.inf + n.negative_inf == 0);
  }
}

TEST_CASE("in the ieee domain, NaN and infinities of both signs are sprinkled too") {
  const kq::Spec spec = kq::test::residual_relu_spec("", "", "ieee");
  const kq::Case c = case_named(spec, "size/1048579");
  REQUIRE(c.ieee_specials);
  const Census n = census<float>(c);
  check_every_finite_special<float>(n);
  CHECK(n.nan > 1000);
  CHECK(n.negative_nan > 1000);
  CHECK(n.inf > 1000);
  CHECK(n.negative_inf > 1000);
}

TEST_CASE("with max_abs_input, nothing beyond the bound: no huge or near-max values") {
  kq::Spec spec = kq::test::residual_relu_spec();
  spec.qualification.max_abs_input = 0.5;
  const kq::Case c = case_named(spec, "size/1048579");
  REQUIRE(c.values == kq::ValueClass::sprinkled);
  const Census n = census<float>(c);
  CHECK(n.max_abs <= 0.5);
  CHECK(n.max_abs > 0.4);  // the background is scaled to the bound, not squeezed further
  CHECK(n.huge + n.near_max + n.overflowing_sums == 0);
  CHECK(n.nan + n.negative_nan + n.inf + n.negative_inf == 0);
  CHECK(n.subnormal > 1000);
  CHECK(n.smallest_normal > 100);
  CHECK(n.negative_zero > 1000);
}

TEST_CASE("sprinkled values are reproducible, and differ by generation and by input") {
  const kq::Case c = case_named(kq::test::residual_relu_spec("", "", "ieee"), "size/65537");
  REQUIRE(c.values == kq::ValueClass::sprinkled);
  const auto a = values_of<float>(c, 0), b = values_of<float>(c, 0);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);  // NaNs included
  auto differing = [](const std::vector<float>& u, const std::vector<float>& v) {
    std::int64_t d = 0;
    for (std::size_t i = 0; i < u.size(); ++i) d += std::memcmp(&u[i], &v[i], sizeof(float)) != 0;
    return d;
  };
  const auto next = values_of<float>(c, 0, 1), other = values_of<float>(c, 1);
  CHECK(differing(a, next) > static_cast<std::int64_t>(a.size() * 9 / 10));
  CHECK(differing(a, other) > static_cast<std::int64_t>(a.size() * 9 / 10));
  // A part filled on its own gets the same values: each element is a function of its position.
  std::vector<float> head(1000);
  kq::fill_input_values(c, 0, kq::DType::f32, head.data(), 1000);
  CHECK(std::memcmp(head.data(), a.data(), head.size() * sizeof(float)) == 0);
}
