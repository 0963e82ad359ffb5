// compare: how an arm's output is held against the float64 reference rounded to the dtype.
#include <cmath>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"
#include "spec/suggest.hpp"

namespace kq::spec_detail {
namespace {

constexpr const char* kForms = "expected bitwise, {ulp: N} or {atol: A, rtol: R}";

}  // namespace

CompareRule read_compare(const Field& f) {
  CompareRule rule;
  const YAML::Node& n = f.node();
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "bitwise") return rule;
    const std::string message = "unknown comparison '" + excerpt(s) + "'; ";
    if (closest_match(s, {"bitwise"})) f.fail(message + "did you mean 'bitwise'?");
    f.fail(message + kForms);
  }
  if (!n.IsMap() || n.size() == 0) f.fail(std::string(kForms) + ", got " + describe(n));
  MapFields m(f, {"ulp", "atol", "rtol"});
  if (auto ulp = m.get("ulp")) {
    for (const char* other : {"atol", "rtol"}) {
      if (auto o = m.get(other)) o->fail("ulp and atol/rtol are alternatives; give one of them");
    }
    rule.kind = CompareRule::Kind::ulp;
    rule.max_ulp = read_int(*ulp);
    if (rule.max_ulp < 0) ulp->fail("must be an integer >= 0, got " + shown(*ulp));
    return rule;
  }
  rule.kind = CompareRule::Kind::tolerance;
  rule.atol = read_non_negative(m.require("atol"));
  rule.rtol = read_non_negative(m.require("rtol"));
  if (rule.atol == 0 && rule.rtol == 0) {
    f.fail(
        "atol and rtol are both 0, a tolerance that admits no error; for exact results use "
        "compare: bitwise");
  }
  return rule;
}

}  // namespace kq::spec_detail
