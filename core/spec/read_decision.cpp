// decision: the baseline arms, in order of preference, the eager arms (the same), and the
// speed-up that counts as a win.
#include <algorithm>
#include <cmath>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"

namespace kq::spec_detail {
namespace {

// One arm name or a non-empty ordered list of them, none empty, none twice. `what` names an
// item in messages ("baseline", "eager").
std::vector<std::string> read_arm_list(const Field& f, const std::string& what) {
  std::vector<Field> names;
  if (f.node().IsSequence()) {
    names = read_list(f);
    if (names.empty()) f.fail("at least one " + what + " arm is required");
  } else {
    names = {f};
  }
  std::vector<std::string> out;
  for (const Field& n : names) {
    std::string name = read_string(n);
    if (name.find_first_not_of(" \t") == std::string::npos)
      n.fail("the " + what + " arm name is empty");
    if (std::find(out.begin(), out.end(), name) != out.end())
      n.fail("'" + name + "' is listed twice");
    out.push_back(std::move(name));
  }
  return out;
}

}  // namespace

DecisionRule read_decision(const Field& f) {
  DecisionRule d;
  MapFields m(f, {"baseline", "eager", "min_speedup"});
  d.baselines = read_arm_list(m.require("baseline"), "baseline");
  if (auto e = m.get("eager")) d.eager = read_arm_list(*e, "eager");
  if (auto v = m.get("min_speedup")) {
    d.min_speedup = read_number(*v);
    if (!std::isfinite(d.min_speedup) || d.min_speedup < 1.0) {
      v->fail("must be a finite number >= 1.0, got " + shown(*v));
    }
  }
  return d;
}

}  // namespace kq::spec_detail
