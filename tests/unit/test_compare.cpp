// Comparison rules on bit patterns.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "qualify/compare.hpp"

namespace {

std::uint64_t b(float f) { return std::bit_cast<std::uint32_t>(f); }
kq::CompareRule bitwise() { return {}; }
kq::CompareRule ulp(std::int64_t n) {
  kq::CompareRule r;
  r.kind = kq::CompareRule::Kind::ulp;
  r.max_ulp = n;
  return r;
}
kq::CompareRule tol(double a, double rt) {
  kq::CompareRule r;
  r.kind = kq::CompareRule::Kind::tolerance;
  r.atol = a;
  r.rtol = rt;
  return r;
}
constexpr auto F = kq::DType::f32;
const float qnan = std::numeric_limits<float>::quiet_NaN();
const float inf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("bitwise: signed zeros count, NaN is a mask") {
  CHECK(kq::element_matches(bitwise(), F, b(1.5f), b(1.5f)));
  CHECK(!kq::element_matches(bitwise(), F, b(0.0f), b(-0.0f)));
  CHECK(!kq::element_matches(bitwise(), F, b(1.0f), b(std::nextafter(1.0f, 2.0f))));
  CHECK(kq::element_matches(bitwise(), F, b(qnan), b(-qnan)));    // any NaN for a NaN
  CHECK(kq::element_matches(bitwise(), F, b(qnan), 0x7fc0dead));  // payloads free
  CHECK(!kq::element_matches(bitwise(), F, b(qnan), b(0.0f)));    // swallowed NaN
  CHECK(!kq::element_matches(bitwise(), F, b(0.0f), b(qnan)));    // invented NaN
  CHECK(!kq::element_matches(bitwise(), F, b(inf), b(-inf)));
}

TEST_CASE("ulp: distance on the ordered line, zeros coincide") {
  const float one = 1.0f, up2 = std::nextafter(std::nextafter(one, 2.0f), 2.0f);
  CHECK(kq::element_matches(ulp(2), F, b(one), b(up2)));
  CHECK(!kq::element_matches(ulp(1), F, b(one), b(up2)));
  CHECK(kq::element_matches(ulp(0), F, b(0.0f), b(-0.0f)));
  CHECK(kq::element_matches(ulp(2), F, b(-std::numeric_limits<float>::denorm_min()),
                            b(std::numeric_limits<float>::denorm_min())));
  CHECK(!kq::element_matches(ulp(1000), F, b(inf), b(std::numeric_limits<float>::max())));
  CHECK(!kq::element_matches(ulp(1000), F, b(1.0f), b(qnan)));
}

TEST_CASE("tolerance: NaN passes only for NaN, infinities only for themselves") {
  CHECK(kq::element_matches(tol(1e-6, 1e-5), F, b(1.0f), b(1.000005f)));
  CHECK(!kq::element_matches(tol(1e-6, 1e-5), F, b(1.0f), b(1.0001f)));
  CHECK(!kq::element_matches(tol(1e30, 1.0), F, b(1.0f), b(qnan)));
  CHECK(kq::element_matches(tol(1e-6, 1e-5), F, b(qnan), b(qnan)));
  CHECK(!kq::element_matches(tol(1e30, 1.0), F, b(inf), b(3e38f)));
}

TEST_CASE("bit descriptions give value and pattern") {
  CHECK(kq::describe_bits(F, b(1.5f)) == "1.5 (0x3fc00000)");
  CHECK(kq::describe_bits(F, b(-0.0f)) == "-0 (0x80000000)");
}

TEST_CASE("a mismatch's description names a flushed subnormal and a zero's sign") {
  CHECK(kq::describe_mismatch(F, b(1.5f), b(1.25f)) ==
        "expected 1.5 (0x3fc00000), got 1.25 (0x3fa00000)");
  CHECK(kq::describe_mismatch(F, 0x80300000u, b(-0.0f)) ==
        "expected -4.40810382e-39 (0x80300000), got -0 (0x80000000) (a subnormal result "
        "flushed to zero)");
  CHECK(kq::describe_mismatch(F, b(0.0f), b(-0.0f)).ends_with("(a zero of the other sign)"));
  // The smallest normal flushed is not a subnormal's flush; f16, bf16 and f64 by their fields.
  CHECK(kq::describe_mismatch(F, 0x00800000u, b(0.0f)) ==
        "expected 1.17549435e-38 (0x00800000), got 0 (0x00000000)");
  CHECK(kq::describe_mismatch(kq::DType::f16, 0x0001, 0x0000).ends_with("flushed to zero)"));
  CHECK(kq::describe_mismatch(kq::DType::f16, 0x0400, 0x0000).ends_with("(0x0000)"));
  CHECK(kq::describe_mismatch(kq::DType::bf16, 0x807f, 0x8000).ends_with("flushed to zero)"));
  CHECK(kq::describe_mismatch(kq::DType::f64, 1, 0).ends_with("flushed to zero)"));
  CHECK(kq::describe_mismatch(kq::DType::i32, 0, 1) == "expected 0, got 1");
}
