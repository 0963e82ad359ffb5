// qualification: extras for the correctness run (seed, more sizes, the hang timeout).
#include <algorithm>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {
namespace {

constexpr double kMaxHangTimeout = 1e6;  // about 11.6 days

}  // namespace

void read_qualification_seed(const MapFields& m, QualificationExtras& q) {
  if (auto v = m.get("seed")) {
    const std::int64_t seed = read_int(*v);
    if (seed < 0) v->fail("must be a non-negative integer, got " + std::to_string(seed));
    q.seed = static_cast<std::uint64_t>(seed);
  }
}

void read_qualification_bounds(const MapFields& m, QualificationExtras& q) {
  if (auto v = m.get("hang_timeout_s")) {
    q.hang_timeout_s = read_positive(*v);
    // Deadlines are steady_clock time points (int64 nanoseconds): keep far from overflowing.
    if (q.hang_timeout_s > kMaxHangTimeout) {
      v->fail("must be at most " + std::to_string(static_cast<int>(kMaxHangTimeout)) +
              " seconds, got " + shown(*v));
    }
  }
  if (auto v = m.get("max_abs_input")) {
    q.max_abs_input = read_positive(*v);
    // The fixed value classes (all-negative, cancellation, signed zeros) reach 1.25.
    if (q.max_abs_input < 2) v->fail("must be at least 2, got " + std::to_string(q.max_abs_input));
  }
}

QualificationExtras read_qualification(const std::optional<Field>& f) {
  QualificationExtras q;
  if (!f) return q;
  MapFields m(*f, {"seed", "extra_sizes", "hang_timeout_s", "max_abs_input"});
  read_qualification_seed(m, q);
  if (auto v = m.get("extra_sizes")) {
    for (const Field& item : read_list(*v)) {
      const std::int64_t n = read_element_count(item);
      if (std::find(q.extra_sizes.begin(), q.extra_sizes.end(), n) != q.extra_sizes.end()) {
        item.fail("size " + std::to_string(n) + " is listed twice");
      }
      q.extra_sizes.push_back(n);
    }
  }
  read_qualification_bounds(m, q);
  return q;
}

}  // namespace kq::spec_detail
