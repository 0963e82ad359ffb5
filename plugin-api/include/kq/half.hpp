// Host-side half-precision values: IEEE binary16 (kq::Half, dtype f16) and bfloat16
// (kq::BFloat16, dtype bf16), stored as their 16 bits. Conversion from double rounds once, to
// nearest even, straight from the double (never through float, which would round twice);
// conversion to double is exact. std::numeric_limits describes both, so code written for float
// and double (value generators, references) works on them unchanged.
//
// Also the dtype-generic element access every host loop needs: kq::load_as_double and
// kq::store_rounded read and write one element of any kq::DType through a void pointer.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kq/tensor.hpp"

namespace kq {
namespace half_detail {

// A binary floating-point format of 1 sign bit, E exponent bits and M stored mantissa bits.
template <int E, int M>
struct Format {
  static constexpr int mantissa_bits = M;
  static constexpr int bias = (1 << (E - 1)) - 1;
  static constexpr int min_exponent = 1 - bias;  // of the smallest normal
  static constexpr std::uint16_t sign = 0x8000;
  static constexpr std::uint16_t inf = static_cast<std::uint16_t>(((1u << E) - 1) << M);
  static constexpr std::uint16_t quiet_nan = static_cast<std::uint16_t>(inf | (1u << (M - 1)));
  static constexpr std::uint16_t max_finite = static_cast<std::uint16_t>(inf - 1);
  static constexpr std::uint16_t min_normal = static_cast<std::uint16_t>(1u << M);
  static constexpr std::uint16_t epsilon = static_cast<std::uint16_t>((bias - M) << M);

  // Round to nearest, ties to even, once. Overflow goes to infinity; NaN keeps its sign.
  static std::uint16_t from_double(double x) {
    const std::uint16_t s = std::signbit(x) ? sign : 0;
    if (std::isnan(x)) return static_cast<std::uint16_t>(s | quiet_nan);
    const double a = std::fabs(x);
    if (std::isinf(a)) return static_cast<std::uint16_t>(s | inf);
    if (a == 0.0) return s;
    int k = 0;
    std::frexp(a, &k);  // a = f * 2^k, f in [0.5, 1): the leading bit is 2^(k - 1)
    int e = k - 1;
    if (e < min_exponent) e = min_exponent;  // subnormal: the quantum stays 2^(min - M)
    // a / quantum, rounded once to an integer (the default rounding mode: to nearest even).
    // Scaling by a power of two is exact, so this is the only rounding.
    const double r = std::nearbyint(std::ldexp(a, M - e));
    // Normal: (e + bias - 1) << M plus r in [2^M, 2^(M+1)] adds the hidden bit into the
    // exponent field, and r = 2^(M+1) carries into the next binade. Subnormal: e + bias - 1 = 0
    // and r <= 2^M, where r = 2^M is the smallest normal's encoding.
    const std::int64_t bits =
        (static_cast<std::int64_t>(e + bias - 1) << M) + static_cast<std::int64_t>(r);
    if (bits >= inf) return static_cast<std::uint16_t>(s | inf);
    return static_cast<std::uint16_t>(s | bits);
  }

  static double to_double(std::uint16_t b) {
    const double s = (b & sign) ? -1.0 : 1.0;
    const int e = (b >> M) & ((1 << E) - 1);
    const int m = b & ((1 << M) - 1);
    if (e == (1 << E) - 1)
      return m ? std::copysign(std::numeric_limits<double>::quiet_NaN(), s)
               : s * std::numeric_limits<double>::infinity();
    if (e == 0) return s * std::ldexp(static_cast<double>(m), min_exponent - M);
    return s * std::ldexp(static_cast<double>(m + (1 << M)), e - bias - M);
  }
};

// A 16-bit floating-point value in format F.
template <typename F, typename Tag>
struct Value16 {
  std::uint16_t bits = 0;

  constexpr Value16() = default;
  explicit Value16(double x) : bits(F::from_double(x)) {}
  explicit operator double() const { return F::to_double(bits); }
  explicit operator float() const { return static_cast<float>(F::to_double(bits)); }
  constexpr Value16 operator-() const { return from_bits(bits ^ F::sign); }
  static constexpr Value16 from_bits(std::uint16_t b) {
    Value16 v;
    v.bits = b;
    return v;
  }
  friend constexpr bool operator==(Value16 a, Value16 b) { return a.bits == b.bits; }
};

struct HalfTag {};
struct BFloat16Tag {};

}  // namespace half_detail

using HalfFormat = half_detail::Format<5, 10>;     // IEEE binary16
using BFloat16Format = half_detail::Format<8, 7>;  // bfloat16: float32's exponent, 8-bit mantissa
using Half = half_detail::Value16<HalfFormat, half_detail::HalfTag>;
using BFloat16 = half_detail::Value16<BFloat16Format, half_detail::BFloat16Tag>;

// Calls f(T{}) with T the host type of `dtype`: float, double, Half or BFloat16. Code written
// once for all four reads with static_cast<double>(T) and rounds with static_cast<T>(double).
template <typename F>
decltype(auto) with_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64:
      return f(double{});
    case DType::f16:
      return f(Half{});
    case DType::bf16:
      return f(BFloat16{});
    case DType::f32:
      break;
  }
  return f(float{});
}

// One element of `dtype` at `p`, exactly, as a double.
inline double load_as_double(DType dtype, const void* p) {
  switch (dtype) {
    case DType::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::f64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DType::f16:
    case DType::bf16: {
      std::uint16_t b;
      std::memcpy(&b, p, 2);
      return dtype == DType::f16 ? HalfFormat::to_double(b) : BFloat16Format::to_double(b);
    }
    case DType::i32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::i64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::boolean:
      return *static_cast<const unsigned char*>(p) != 0 ? 1.0 : 0.0;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// `x` rounded once, to nearest even, into one element of `dtype` at `p`.
inline void store_rounded(DType dtype, double x, void* p) {
  switch (dtype) {
    case DType::f32: {
      const float f = static_cast<float>(x);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::f64:
      std::memcpy(p, &x, 8);
      return;
    case DType::f16:
    case DType::bf16: {
      const std::uint16_t b =
          dtype == DType::f16 ? HalfFormat::from_double(x) : BFloat16Format::from_double(x);
      std::memcpy(p, &b, 2);
      return;
    }
    case DType::i32: {  // integer types: the nearest integer (callers keep x in range)
      const auto v = static_cast<std::int32_t>(std::nearbyint(x));
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::i64: {
      const auto v = static_cast<std::int64_t>(std::nearbyint(x));
      std::memcpy(p, &v, 8);
      return;
    }
    case DType::boolean:
      *static_cast<unsigned char*>(p) = x != 0.0 ? 1 : 0;
      return;
  }
}

// `x` rounded once into `dtype` and back: the value an element of that dtype holds.
inline double round_to(DType dtype, double x) {
  unsigned char buf[8];
  store_rounded(dtype, x, buf);
  return load_as_double(dtype, buf);
}

}  // namespace kq

namespace std {

template <typename F, typename Tag>
class numeric_limits<kq::half_detail::Value16<F, Tag>> {
  using V = kq::half_detail::Value16<F, Tag>;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr int radix = 2;
  static constexpr int digits = F::mantissa_bits + 1;       // the hidden bit included
  static constexpr int min_exponent = F::min_exponent + 1;  // as for float: 2^(e-1) is normal
  static constexpr int max_exponent = F::bias + 1;
  static constexpr V min() { return V::from_bits(F::min_normal); }
  static constexpr V max() { return V::from_bits(F::max_finite); }
  static constexpr V lowest() { return V::from_bits(F::max_finite | F::sign); }
  static constexpr V epsilon() { return V::from_bits(F::epsilon); }
  static constexpr V denorm_min() { return V::from_bits(1); }
  static constexpr V infinity() { return V::from_bits(F::inf); }
  static constexpr V quiet_NaN() { return V::from_bits(F::quiet_nan); }
};

}  // namespace std
