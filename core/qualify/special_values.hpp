// The special values a sprinkled case mixes into its background, for any floating-point type T
// that std::numeric_limits describes (float, double, and kq/half.hpp's Half and BFloat16): which
// kinds a case admits, and one value of each kind.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "plan/case.hpp"

namespace kq {

enum class Special {
  signed_zero,      // -0 or +0
  subnormal,        // the smallest subnormal, a mid one (1e-40 for f32), or any other
  smallest_normal,  // the smallest normal or half of it
  huge,             // magnitudes of 1e20 to 2e20 (1e4 to 2e4 for f16, whose max is 65504)
  near_max,         // 0.6 to 1 times the largest finite value: sums overflow to inf
  nan,              // quiet NaN of either sign
  inf,              // +inf or -inf
};

// The kinds case `c` admits: huge and near-max values only when no bound is set, NaN and
// infinities only in the ieee domain.
inline std::vector<Special> admitted_specials(const Case& c) {
  std::vector<Special> kinds = {Special::signed_zero, Special::subnormal, Special::smallest_normal};
  if (c.max_abs_input <= 0) kinds.insert(kinds.end(), {Special::huge, Special::near_max});
  if (c.ieee_specials) kinds.insert(kinds.end(), {Special::nan, Special::inf});
  return kinds;
}

// The magnitude of "huge" values: 1e20 where the type reaches far beyond it, 1e4 for f16 (sums
// of two stay finite; products overflow).
template <typename T>
constexpr double huge_magnitude() {
  return std::numeric_limits<T>::max_exponent > 64 ? 1e20 : 1e4;
}

// One value of `kind`: `r` picks among the kind's values, `u` in [0, 1) sets a magnitude,
// `negative` the sign.
template <typename T>
T special_value(Special kind, std::uint64_t r, double u, bool negative) {
  using L = std::numeric_limits<T>;
  const double sign = negative ? -1.0 : 1.0;
  const auto signed_value = [&](double v) { return static_cast<T>(sign * v); };
  switch (kind) {
    case Special::signed_zero:
      return signed_value(0.0);
    case Special::subnormal: {
      const double tiny = static_cast<double>(L::denorm_min());
      // Below the smallest normal: 2^(digits - 1) - 1 subnormals, each a multiple of the smallest.
      const std::uint64_t count = (std::uint64_t{1} << (L::digits - 1)) - 1;
      switch (r % 3) {
        case 0:
          return signed_value(tiny);
        case 1:
          return signed_value(static_cast<double>(L::min()) * 0.0085);  // 1e-40 for f32
        default:
          return signed_value(tiny * static_cast<double>(1 + (r >> 2) % count));
      }
    }
    case Special::smallest_normal:
      return signed_value(static_cast<double>(L::min()) * (r % 2 == 0 ? 1.0 : 0.5));
    case Special::huge:
      return signed_value((1.0 + u) * huge_magnitude<T>());
    case Special::near_max:
      return signed_value((0.6 + 0.4 * u) * static_cast<double>(L::max()));
    case Special::nan:
      return negative ? static_cast<T>(-L::quiet_NaN()) : L::quiet_NaN();
    case Special::inf:
      return negative ? static_cast<T>(-L::infinity()) : L::infinity();
  }
  return T(1);
}

}  // namespace kq
