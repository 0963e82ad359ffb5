// kq/half.hpp: f16 and bf16 conversions round once, to nearest even, straight from double;
// every 16-bit pattern converts to double and back unchanged; the limits are the formats'.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>
#include <random>

#include "kq/half.hpp"

namespace {

using kq::BFloat16Format;
using kq::HalfFormat;

bool is_nan16(std::uint16_t b, std::uint16_t inf) {
  return (b & inf) == inf && (b & ~(inf | 0x8000));
}

// bfloat16 from a float by the usual bit formula (round to nearest even), NaN aside.
std::uint16_t bf16_from_float(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

template <typename F>
void check_round_trip_and_midpoints() {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double d = F::to_double(bits);
    if (is_nan16(bits, F::inf)) {
      REQUIRE(std::isnan(d));
      REQUIRE(std::signbit(d) == bool(bits & 0x8000));
      continue;
    }
    REQUIRE(F::from_double(d) == bits);
    // Between this value and the next one up in magnitude: the exact midpoint goes to the
    // even one; a hair either side goes to the nearer.
    if ((bits & 0x7fff) >= F::max_finite) continue;
    const auto next = static_cast<std::uint16_t>(bits + 1);
    const double mid = 0.5 * (d + F::to_double(next));  // exact in double
    const std::uint16_t even = (bits & 1) ? next : bits;
    INFO("bits 0x" << std::hex << b);
    REQUIRE(F::from_double(mid) == even);
    if (d != 0.0 || (bits & 0x8000) == 0) {
      const double toward_next = std::nextafter(mid, 2.0 * F::to_double(next));
      const double toward_this = std::nextafter(mid, d);
      REQUIRE(F::from_double(toward_next) == next);
      REQUIRE(F::from_double(toward_this) == bits);
    }
  }
}

}  // namespace

TEST_CASE(
    "every f16 and bf16 pattern round-trips; midpoints round to even, neighbours to nearest") {
  check_round_trip_and_midpoints<HalfFormat>();
  check_round_trip_and_midpoints<BFloat16Format>();
}

TEST_CASE("conversion from double rounds once, not through float") {
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10 in f16; 2^-40 above it is nearer the upper.
  // Through float the 2^-40 is lost first and the tie then goes to even (1).
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(HalfFormat::from_double(x) == 0x3c01);
  CHECK(HalfFormat::from_double(static_cast<float>(x)) == 0x3c00);
  const double y = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);  // bf16's tie at 1
  CHECK(BFloat16Format::from_double(y) == 0x3f81);
  CHECK(BFloat16Format::from_double(static_cast<float>(y)) == 0x3f80);
}

TEST_CASE("f16 edges: overflow, subnormals down to 2^-24, signed zero, NaN sign") {
  CHECK(HalfFormat::from_double(65504.0) == 0x7bff);
  CHECK(HalfFormat::from_double(65519.99) == 0x7bff);
  CHECK(HalfFormat::from_double(65520.0) == 0x7c00);  // the tie above 65504 goes to even: inf
  CHECK(HalfFormat::from_double(-1e300) == 0xfc00);
  CHECK(HalfFormat::from_double(std::ldexp(1.0, -24)) == 0x0001);
  CHECK(HalfFormat::from_double(std::ldexp(1.0, -25)) == 0x0000);     // tie: to even, zero
  CHECK(HalfFormat::from_double(-std::ldexp(1.0, -25)) == 0x8000);    // keeps the sign
  CHECK(HalfFormat::from_double(std::ldexp(3.0, -25)) == 0x0002);     // tie: to even
  CHECK(HalfFormat::from_double(std::ldexp(1.0, -14)) == 0x0400);     // smallest normal
  CHECK(HalfFormat::from_double(std::ldexp(1023.5, -24)) == 0x0400);  // rounds up into it
  CHECK(HalfFormat::from_double(1e-300) == 0x0000);
  CHECK(HalfFormat::from_double(-0.0) == 0x8000);
  CHECK(HalfFormat::from_double(-std::nan("")) == 0xfe00);
  CHECK(HalfFormat::to_double(0x7bff) == 65504.0);
  CHECK(std::numeric_limits<kq::Half>::digits == 11);
  CHECK(static_cast<double>(std::numeric_limits<kq::Half>::max()) == 65504.0);
  CHECK(static_cast<double>(std::numeric_limits<kq::Half>::min()) == std::ldexp(1.0, -14));
  CHECK(static_cast<double>(std::numeric_limits<kq::Half>::denorm_min()) == std::ldexp(1.0, -24));
  CHECK(static_cast<double>(std::numeric_limits<kq::Half>::epsilon()) == std::ldexp(1.0, -10));
}

TEST_CASE("bf16 edges and agreement with the float bit formula") {
  CHECK(std::numeric_limits<kq::BFloat16>::digits == 8);
  CHECK(static_cast<double>(std::numeric_limits<kq::BFloat16>::max()) ==
        std::ldexp(255.0, 120));  // 0x7f7f = (2 - 2^-7) * 2^127
  CHECK(static_cast<double>(std::numeric_limits<kq::BFloat16>::min()) == std::ldexp(1.0, -126));
  CHECK(static_cast<double>(std::numeric_limits<kq::BFloat16>::denorm_min()) ==
        std::ldexp(1.0, -133));
  CHECK(BFloat16Format::from_double(3.4e38) == 0x7f80);  // above max + half an ulp: inf
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 2000000; ++i) {
    const auto u = static_cast<std::uint32_t>(rng());
    const float f = std::bit_cast<float>(u);
    if (std::isnan(f)) continue;
    INFO("float bits 0x" << std::hex << u);
    REQUIRE(BFloat16Format::from_double(f) == bf16_from_float(f));
  }
}

#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
TEST_CASE("f16 from double agrees with the compiler's _Float16 conversion") {
  std::mt19937_64 rng(777);
  for (int i = 0; i < 2000000; ++i) {
    // Doubles spread over f16's range and past it, with every mantissa bit random.
    const double x = std::ldexp(1.0 + static_cast<double>(rng() >> 12) * 0x1p-52,
                                static_cast<int>(rng() % 50) - 30) *
                     ((rng() & 1) ? -1.0 : 1.0);
    const _Float16 h = static_cast<_Float16>(x);
    std::uint16_t want;
    std::memcpy(&want, &h, 2);
    INFO("x = " << x);
    REQUIRE(HalfFormat::from_double(x) == want);
  }
}
#endif

TEST_CASE("load_as_double and store_rounded cover every dtype") {
  unsigned char buf[8];
  for (auto dt : {kq::DType::f32, kq::DType::f64, kq::DType::f16, kq::DType::bf16}) {
    kq::store_rounded(dt, 1.5, buf);
    CHECK(kq::load_as_double(dt, buf) == 1.5);
    CHECK(kq::dtype_size(dt) == (dt == kq::DType::f64 ? 8u : dt == kq::DType::f32 ? 4u : 2u));
  }
  CHECK(kq::round_to(kq::DType::f16, 0.1) == kq::HalfFormat::to_double(0x2e66));
  CHECK(kq::round_to(kq::DType::bf16, 0.1) == kq::BFloat16Format::to_double(0x3dcd));
  CHECK(kq::to_string(kq::DType::bf16) == "bf16");
}
