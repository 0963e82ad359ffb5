// timing: sizes and the measurement policy.
#include <algorithm>
#include <limits>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {
namespace {

constexpr int kMinRounds = 3;  // fewer rounds give no confidence interval worth the name

int read_rounds(const Field& f) {
  const std::int64_t v = read_int(f);
  if (v < kMinRounds || v > std::numeric_limits<int>::max()) {
    f.fail("must be an integer >= " + std::to_string(kMinRounds) + ", got " + std::to_string(v));
  }
  return static_cast<int>(v);
}

}  // namespace

void read_timing_policy(const MapFields& m, TimingPolicy& t) {
  if (auto v = m.get("l2")) {
    using L2 = TimingPolicy::L2;
    static constexpr L2 kPolicies[] = {L2::flush, L2::rotate, L2::warm};
    t.l2 = kPolicies[read_choice(*v, "l2 policy", {"flush", "rotate", "warm"})];
  }
  if (auto v = m.get("modes")) {
    const std::vector<Field> modes = read_list(*v);
    if (modes.empty()) v->fail("at least one mode is required");
    t.modes.clear();
    for (const Field& item : modes) {
      static const std::vector<std::string_view> kModes = {"single", "graph"};
      std::string mode(kModes[read_choice(item, "timing mode", kModes)]);
      if (std::find(t.modes.begin(), t.modes.end(), mode) != t.modes.end()) {
        item.fail("mode '" + mode + "' is listed twice");
      }
      t.modes.push_back(std::move(mode));
    }
  }

  const auto min_rounds = m.get("min_rounds");
  const auto max_rounds = m.get("max_rounds");
  if (min_rounds) t.min_rounds = read_rounds(*min_rounds);
  if (max_rounds) t.max_rounds = read_rounds(*max_rounds);
  if (t.max_rounds < t.min_rounds) {
    const std::string what = "max_rounds " + std::to_string(t.max_rounds) +
                             (max_rounds ? "" : " (the default)") + " is below min_rounds " +
                             std::to_string(t.min_rounds);
    (max_rounds ? *max_rounds : *min_rounds).fail(what);
  }
  if (auto v = m.get("max_seconds")) t.max_seconds = read_positive(*v);
  if (auto v = m.get("warmup_ms")) t.warmup_ms = read_non_negative(*v);
}

TimingPolicy read_timing(const Field& f) {
  TimingPolicy t;
  MapFields m(f, {"sizes", "l2", "modes", "min_rounds", "max_rounds", "max_seconds", "warmup_ms"});

  const Field sizes = m.require("sizes");
  const std::vector<Field> items = read_list(sizes);
  if (items.empty()) sizes.fail("at least one size is required");
  for (const Field& item : items) {
    const std::int64_t n = read_element_count(item);
    if (!t.sizes.empty() && n <= t.sizes.back()) {
      item.fail("sizes must be strictly increasing: " + std::to_string(n) + " follows " +
                std::to_string(t.sizes.back()));
    }
    t.sizes.push_back(n);
  }

  read_timing_policy(m, t);
  return t;
}

}  // namespace kq::spec_detail
