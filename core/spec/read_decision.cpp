// decision: the baseline arms, in order of preference, and the speed-up that counts as a win.
#include <algorithm>
#include <cmath>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"

namespace kq::spec_detail {

Decision read_decision(const Field& f) {
  Decision d;
  MapFields m(f, {"baseline", "min_speedup"});
  const Field baseline = m.require("baseline");
  std::vector<Field> names;
  if (baseline.node().IsSequence()) {
    names = read_list(baseline);
    if (names.empty()) baseline.fail("at least one baseline arm is required");
  } else {
    names = {baseline};
  }
  for (const Field& n : names) {
    std::string name = read_string(n);
    if (name.find_first_not_of(" \t") == std::string::npos)
      n.fail("the baseline arm name is empty");
    if (std::find(d.baselines.begin(), d.baselines.end(), name) != d.baselines.end())
      n.fail("'" + name + "' is listed twice");
    d.baselines.push_back(std::move(name));
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
