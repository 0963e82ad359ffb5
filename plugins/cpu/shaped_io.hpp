// Elements of every kq::DType read into the compute type and written back, for the shaped
// evaluator. Reads are exact for f16 and bf16 (bit operations, no libm) and for f32 into
// float or double; f64 into float and i64 beyond 2^24 into float round once, as a kernel
// computing in float would. Writes round once to nearest even (f16 through kq/half.hpp from the
// exact double of the value; bf16 from float by the same rounding done on the bits); integer
// writes refuse a value the type cannot hold, as the reference does.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kq/half.hpp"
#include "kq/tensor.hpp"

namespace kq::cpu::shaped {

inline float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u)  // inf, NaN: the payload moves up with the fraction
    return std::bit_cast<float>(sign | 0x7f800000u | ((em & 0x3ffu) << 13));
  if (em >= 0x400u)  // normal: rebias the exponent (127 - 15 = 112)
    return std::bit_cast<float>(sign | ((em + (112u << 10)) << 13));
  const float m = static_cast<float>(em) * 0x1p-24f;  // subnormal: exact
  return sign ? -m : m;
}

inline float bf16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// Round to nearest even on the bits: adding 0x7fff plus the lowest kept bit carries exactly when
// the dropped half is above the tie, or at the tie with an odd kept part; overflow reaches inf.
// NaN becomes the quiet NaN of its sign, as BFloat16Format::from_double gives.
inline std::uint16_t float_to_bf16(float x) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>(((b >> 16) & 0x8000u) | 0x7fc0u);
  return static_cast<std::uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

// Calls fn(read) with read(base, i) giving element i of an array of `dt` as a T.
template <class T, class Fn>
inline void with_reader(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::f32:
      fn([](const void* b, std::int64_t i) {
        return static_cast<T>(static_cast<const float*>(b)[i]);
      });
      return;
    case DType::f64:
      fn([](const void* b, std::int64_t i) {
        return static_cast<T>(static_cast<const double*>(b)[i]);
      });
      return;
    case DType::f16:
      fn([](const void* b, std::int64_t i) {
        return static_cast<T>(f16_to_float(static_cast<const std::uint16_t*>(b)[i]));
      });
      return;
    case DType::bf16:
      fn([](const void* b, std::int64_t i) {
        return static_cast<T>(bf16_to_float(static_cast<const std::uint16_t*>(b)[i]));
      });
      return;
    case DType::i32:
      fn([](const void* b, std::int64_t i) {
        return static_cast<T>(static_cast<const std::int32_t*>(b)[i]);
      });
      return;
    case DType::i64:
      fn([](const void* b, std::int64_t i) {
        return static_cast<T>(static_cast<const std::int64_t*>(b)[i]);
      });
      return;
    case DType::boolean:
      fn([](const void* b, std::int64_t i) {
        return static_cast<const std::uint8_t*>(b)[i] != 0 ? T(1) : T(0);
      });
      return;
  }
}

template <class T>
inline T load_one(DType dt, const void* base, std::int64_t i) {
  T r{};
  with_reader<T>(dt, [&](auto read) { r = read(base, i); });
  return r;
}

// out[j] = element off + j * step, j < n.
template <class T>
inline void load_strided(DType dt, const void* base, std::int64_t off, std::int64_t step,
                         std::int64_t n, T* __restrict out) {
  with_reader<T>(dt, [&](auto read) {
    if (step == 1) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = read(base, off + j);
    } else {
      for (std::int64_t j = 0; j < n; ++j) out[j] = read(base, off + j * step);
    }
  });
}

// out[j] = element off[j], j < n.
template <class T>
inline void load_gather(DType dt, const void* base, const std::int64_t* off, std::int64_t n,
                        T* __restrict out) {
  with_reader<T>(dt, [&](auto read) {
    for (std::int64_t j = 0; j < n; ++j) out[j] = read(base, off[j]);
  });
}

// An element of an integer tensor used as an index: exact for i32, i64 and bool; an integer
// tensor the arm holds (in double) must hold an integral value in int64's range.
inline bool load_index(DType dt, const void* base, std::int64_t i, std::int64_t& out,
                       double& seen) {
  switch (dt) {
    case DType::i32:
      out = static_cast<const std::int32_t*>(base)[i];
      return true;
    case DType::i64:
      out = static_cast<const std::int64_t*>(base)[i];
      return true;
    case DType::boolean:
      out = static_cast<const std::uint8_t*>(base)[i] != 0 ? 1 : 0;
      return true;
    default:
      break;
  }
  seen = load_one<double>(dt, base, i);
  if (!(std::trunc(seen) == seen && seen >= -9223372036854775808.0 && seen < 9223372036854775808.0))
    return false;
  out = static_cast<std::int64_t>(seen);
  return true;
}

// Whether `x` fits an integer dtype exactly (bool takes any non-NaN value, as != 0).
inline bool representable(DType dt, double x) {
  switch (dt) {
    case DType::i32:
      return std::trunc(x) == x && x >= -2147483648.0 && x <= 2147483647.0;
    case DType::i64:
      return std::trunc(x) == x && x >= -9223372036854775808.0 && x < 9223372036854775808.0;
    case DType::boolean:
      return !std::isnan(x);
    default:
      return true;
  }
}

// Calls fn(write) with write(base, i, x) storing x (a T) as element i of an array of `dt`,
// rounded once. The caller has checked representable() for the integer types.
template <class T, class Fn>
inline void with_writer(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::f32:
      fn([](void* b, std::int64_t i, T x) { static_cast<float*>(b)[i] = static_cast<float>(x); });
      return;
    case DType::f64:
      fn([](void* b, std::int64_t i, T x) { static_cast<double*>(b)[i] = static_cast<double>(x); });
      return;
    case DType::f16:
      fn([](void* b, std::int64_t i, T x) {
        static_cast<std::uint16_t*>(b)[i] = HalfFormat::from_double(static_cast<double>(x));
      });
      return;
    case DType::bf16:
      fn([](void* b, std::int64_t i, T x) {
        if constexpr (sizeof(T) == 4)
          static_cast<std::uint16_t*>(b)[i] = float_to_bf16(x);
        else
          static_cast<std::uint16_t*>(b)[i] = BFloat16Format::from_double(x);
      });
      return;
    case DType::i32:
      fn([](void* b, std::int64_t i, T x) {
        static_cast<std::int32_t*>(b)[i] = static_cast<std::int32_t>(x);
      });
      return;
    case DType::i64:
      fn([](void* b, std::int64_t i, T x) {
        static_cast<std::int64_t*>(b)[i] = static_cast<std::int64_t>(x);
      });
      return;
    case DType::boolean:
      fn([](void* b, std::int64_t i, T x) {
        static_cast<std::uint8_t*>(b)[i] = x != T(0) ? 1 : 0;
      });
      return;
  }
}

}  // namespace kq::cpu::shaped
