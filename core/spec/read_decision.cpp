// decision: the baseline arm and the speed-up that counts as a win.
#include <cmath>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"

namespace kq::spec_detail {

Decision read_decision(const Field& f) {
  Decision d;
  MapFields m(f, {"baseline", "min_speedup"});
  const Field baseline = m.require("baseline");
  d.baseline = read_string(baseline);
  if (d.baseline.find_first_not_of(" \t") == std::string::npos) {
    baseline.fail("the baseline arm name is empty");
  }
  if (auto v = m.get("min_speedup")) {
    d.min_speedup = read_number(*v);
    if (!std::isfinite(d.min_speedup) || d.min_speedup < 1.0) {
      v->fail("must be a finite number >= 1.0, got " + shown(*v));
    }
  }
  return d;
}

}  // namespace kq::spec_detail
