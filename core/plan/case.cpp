#include "plan/case.hpp"

namespace kq {

const char* to_string(ValueClass v) {
  switch (v) {
    case ValueClass::mixed:
      return "mixed";
    case ValueClass::all_negative:
      return "all_negative";
    case ValueClass::cancel:
      return "cancel";
    case ValueClass::negative_zero:
      return "negative_zero";
    case ValueClass::denormal:
      return "denormal";
    case ValueClass::huge:
      return "huge";
    case ValueClass::overflow:
      return "overflow";
    case ValueClass::nan:
      return "nan";
    case ValueClass::inf:
      return "inf";
    case ValueClass::sprinkled:
      return "sprinkled";
    case ValueClass::ties:
      return "ties";
    case ValueClass::offset_rows:
      return "offset_rows";
    case ValueClass::constant_rows:
      return "constant_rows";
    case ValueClass::spikes:
      return "spikes";
    case ValueClass::integers:
      return "integers";
    case ValueClass::masked_rows:
      return "masked_rows";
  }
  return "?";
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> st(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::int64_t Case::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace kq
