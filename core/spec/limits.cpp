#include <cmath>

#include "spec/sections.hpp"

namespace kq::spec_detail {

double read_positive(const Field& f) {
  const double v = read_number(f);
  if (!std::isfinite(v) || v <= 0) f.fail("must be a finite number > 0, got " + shown(f));
  return v;
}

double read_non_negative(const Field& f) {
  const double v = read_number(f);
  if (!std::isfinite(v) || v < 0) {
    f.fail("must be a finite number >= 0, got " + shown(f));
  }
  return v;
}

std::int64_t read_positive_int(const Field& f) {
  const std::int64_t v = read_int(f);
  if (v <= 0) f.fail("must be a positive integer, got " + std::to_string(v));
  return v;
}

std::int64_t read_element_count(const Field& f) {
  const std::int64_t v = read_positive_int(f);
  if (v > kMaxElements) {
    f.fail("must be at most 2^40 (" + std::to_string(kMaxElements) + ") elements, got " +
           std::to_string(v));
  }
  return v;
}

}  // namespace kq::spec_detail
