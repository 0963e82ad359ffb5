#include "qualify/values.hpp"

#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kq/half.hpp"
#include "qualify/special_values.hpp"

namespace kq {
namespace {

// Streams of hashes per position, apart from the inputs' (0, 1, ...) and the classes' own.
constexpr int kSprinkleAt = 1 << 20;     // shared by every input: special or not, which kind
constexpr int kSprinkleInput = 2 << 20;  // + input: does this input take the position's kind
constexpr int kSprinkleValue = 3 << 20;  // + input: which value of the kind, its sign
constexpr int kSprinkleSize = 4 << 20;   // + input: the value's magnitude within its kind

template <typename T>
struct Gen {
  const Case& c;
  int input;
  std::uint64_t seed;
  std::vector<Special> specials = admitted_specials(c);

  // Stream t is a splitmix64 sequence of its own start: position j is one finalising mix, the
  // start's mix depending on t alone, which the compiler takes out of the fill loop. A case's
  // 2^31 positions of its several streams lie, almost surely, far apart on the 2^64 cycle.
  static std::uint64_t stream(std::uint64_t seed, int t) {
    return splitmix64(seed ^ (static_cast<std::uint64_t>(t) * 0x100000001b3ull));
  }
  std::uint64_t bits(std::int64_t j, int t) const {
    return splitmix64(stream(seed, t) + static_cast<std::uint64_t>(j) * 0x9e3779b97f4a7c15ull);
  }
  double uniform(std::int64_t j, int t) const {  // in [0, 1)
    return static_cast<double>(bits(j, t) >> 11) * (1.0 / 9007199254740992.0);
  }
  double mixed(std::int64_t j, int t, double scale) const {
    return (2.0 * uniform(j, t) - 1.0) * scale;
  }

  // About 1 position in 8 holds specials, of one kind for every input there. Near-max values
  // take every input, with one sign (so sums overflow); other kinds take each input with
  // probability 3/4, so a special also meets ordinary values in the other inputs.
  T sprinkled(std::int64_t j, int t) const {
    const std::uint64_t at = bits(j, kSprinkleAt);
    if (at % 8 != 0) return static_cast<T>(mixed(j, t, c.scale));
    const Special kind = specials[(at >> 3) % specials.size()];
    const std::uint64_t r = bits(j, kSprinkleValue + t);
    bool negative = r & 1;
    if (kind == Special::near_max)
      negative = (at >> 40) & 1;
    else if (bits(j, kSprinkleInput + t) % 4 == 0)
      return static_cast<T>(mixed(j, t, c.scale));
    return special_value<T>(kind, r >> 1, uniform(j, kSprinkleSize + t), negative);
  }

  // A subnormal well inside the range: 1e-40 for f32, 1e-310 for f64, about 0.0085 of the
  // smallest normal for the half types (5.2e-7 for f16, 1e-40 for bf16).
  static double mid_subnormal() {
    if constexpr (sizeof(T) == 4) return 1e-40;
    if constexpr (sizeof(T) == 8) return 1e-310;
    return static_cast<double>(std::numeric_limits<T>::min()) * 0.0085;
  }

  // Input 0: a value of magnitude in [1/8, 8), positive 4 times in 5, whose mantissa field is
  // at least 2 from either end of its binade. Every other input: half or three halves of input
  // 0's ulp, either sign, so that input 0 + input k is exactly halfway between two neighbours of
  // the dtype in the same binade: rounding to nearest even and truncation part there.
  T tie(std::int64_t j, int t) const {
    constexpr int m_bits = std::numeric_limits<T>::digits - 1;
    const double steps = std::ldexp(1.0, m_bits) - 4.0;  // mantissa fields 2 .. 2^M - 3
    const double m = 2.0 + std::floor(uniform(j, 51) * steps);
    const int e = static_cast<int>(bits(j, 52) % 6) - 3;
    const double sign = uniform(j, 50) < 0.8 ? 1.0 : -1.0;
    const T x = static_cast<T>(sign * std::ldexp(1.0 + std::ldexp(m, -m_bits), e));  // exact
    if (t == 0) return x;
    const double ulp = std::ldexp(1.0, e - m_bits);
    const double k = (bits(j, 53 + t) & 1) ? 1.5 : 0.5;
    return static_cast<T>(((bits(j, 60 + t) & 1) ? -k : k) * ulp);
  }

  template <ValueClass V>
  T value(std::int64_t j) const {
    using L = std::numeric_limits<T>;
    const int t = input;
    switch (V) {
      case ValueClass::mixed:
        return static_cast<T>(mixed(j, t, c.scale));
      case ValueClass::all_negative:
        return static_cast<T>(-(0.25 + uniform(j, t)));
      case ValueClass::cancel:
        if (t == 1) return static_cast<T>(-static_cast<T>(mixed(j, 0, 1.0)));
        return static_cast<T>(mixed(j, t, 1.0));
      case ValueClass::negative_zero:
        return (j % 2 == 0) ? static_cast<T>(-0.0) : static_cast<T>(mixed(j, t, 1.0));
      case ValueClass::denormal: {
        const double min = static_cast<double>(L::min());
        const T table[] = {static_cast<T>(mid_subnormal()),
                           -static_cast<T>(mid_subnormal()),
                           L::denorm_min(),
                           -L::denorm_min(),
                           L::min(),
                           -L::min(),
                           static_cast<T>(min * 0.5),
                           -static_cast<T>(min * 0.375)};
        std::uint64_t k = static_cast<std::uint64_t>(uniform(j, t) * 10.0);
        if (k < 8) return table[k];
        return static_cast<T>(mixed(j, t, 1.0));
      }
      case ValueClass::huge:
        return static_cast<T>((uniform(j, t + 7) < 0.5 ? -1.0 : 1.0) * (1.0 + uniform(j, t)) *
                              huge_magnitude<T>());
      case ValueClass::overflow: {
        // Mostly one sign per element across inputs, so sums overflow to +inf or -inf.
        double sign = uniform(j, 99) < 0.5 ? -1.0 : 1.0;
        if (uniform(j, t + 13) < 0.1) sign = -sign;
        return static_cast<T>(sign * (0.6 + 0.4 * uniform(j, t)) * static_cast<double>(L::max()));
      }
      case ValueClass::nan:
        if (t == c.special_input && j % 7 == 3)
          return (j % 14 == 3) ? L::quiet_NaN() : -L::quiet_NaN();
        return static_cast<T>(mixed(j, t, 1.0));
      case ValueClass::inf:
        if (t == c.special_input && j % 7 == 3) return L::infinity();
        if (t == c.special_input && j % 7 == 5) return -L::infinity();
        return static_cast<T>(mixed(j, t, 1.0));
      case ValueClass::sprinkled:
        return sprinkled(j, t);
      case ValueClass::ties:
        return tie(j, t);
    }
    return T(1);
  }
};

// The loop for one value class: the class is a constant in it, so that each class's loop
// carries only its own arithmetic.
template <ValueClass V, typename T>
void fill_class(const Gen<T>& g, T* dst, std::int64_t count) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, 1 << 16),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t j = r.begin(); j < r.end(); ++j)
                        dst[j] = g.template value<V>(j);
                    });
}

template <typename T>
void fill(const Case& c, int input, T* dst, std::int64_t count, std::uint64_t generation) {
  const Gen<T> g{c, input, splitmix64(c.seed + generation * 0x51ed27ull)};
  using V = ValueClass;
  switch (c.values) {
    case V::mixed:
      return fill_class<V::mixed>(g, dst, count);
    case V::all_negative:
      return fill_class<V::all_negative>(g, dst, count);
    case V::cancel:
      return fill_class<V::cancel>(g, dst, count);
    case V::negative_zero:
      return fill_class<V::negative_zero>(g, dst, count);
    case V::denormal:
      return fill_class<V::denormal>(g, dst, count);
    case V::huge:
      return fill_class<V::huge>(g, dst, count);
    case V::overflow:
      return fill_class<V::overflow>(g, dst, count);
    case V::nan:
      return fill_class<V::nan>(g, dst, count);
    case V::inf:
      return fill_class<V::inf>(g, dst, count);
    case V::sprinkled:
      return fill_class<V::sprinkled>(g, dst, count);
    case V::ties:
      return fill_class<V::ties>(g, dst, count);
  }
}

}  // namespace

void fill_input_values(const Case& c, int input, DType dtype, void* dst, std::int64_t count,
                       std::uint64_t generation) {
  with_dtype(dtype,
             [&]<typename T>(T) { fill(c, input, static_cast<T*>(dst), count, generation); });
}

}  // namespace kq
