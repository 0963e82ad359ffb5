// compare (format 2): a rule per output, keyed by the output's name. Tolerances are formulas of
// the dims, params and u, so that they can follow the reduction length ("8 * u * sqrt(N)").
#include "kq/indexed.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"
#include "spec/suggest.hpp"

namespace kq::spec_detail {
namespace {

constexpr const char* kForms =
    "expected bitwise, {ulp: N}, {atol: F, rtol: F} or {bound: accumulation} (with ulp: N, "
    "the ulps allowed beyond the bound, 1 by default)";

ShapedCompare read_rule(const Field& f, const ix::TensorDecl& out, const ix::Declarations& decls) {
  ShapedCompare rule;
  const YAML::Node& n = f.node();
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "bitwise") return rule;
    const std::string message = "unknown comparison '" + excerpt(s) + "'; ";
    if (closest_match(s, {"bitwise"})) f.fail(message + "did you mean 'bitwise'?");
    f.fail(message + kForms);
  }
  if (!n.IsMap() || n.size() == 0) f.fail(std::string(kForms) + ", got " + describe(n));
  if (is_integer(out.dtype)) {
    f.fail("output '" + out.name + "' is " + std::string(to_string(out.dtype)) +
           ": integer and bool outputs compare bitwise");
  }
  MapFields m(f, {"ulp", "atol", "rtol", "bound"});
  const auto ulp = m.get("ulp"), atol = m.get("atol"), rtol = m.get("rtol"), bound = m.get("bound");
  const int forms = (ulp && !bound ? 1 : 0) + (atol || rtol ? 1 : 0) + (bound ? 1 : 0);
  if (forms > 1) f.fail("ulp, atol/rtol and bound are alternatives; give one of them");
  if (bound) {
    read_choice(*bound, "bound", {"accumulation"});
    rule.kind = ShapedCompare::Kind::accumulation_bound;
    rule.max_ulp = 1;  // the output's own rounding
    if (ulp) {
      rule.max_ulp = read_int(*ulp);
      if (rule.max_ulp < 1)
        ulp->fail(
            "beside a bound, the ulps allowed beyond it: an integer >= 1 (the output's own "
            "rounding), got " +
            shown(*ulp));
    }
  } else if (ulp) {
    rule.kind = ShapedCompare::Kind::ulp;
    rule.max_ulp = read_int(*ulp);
    if (rule.max_ulp < 0) ulp->fail("must be an integer >= 0, got " + shown(*ulp));
  } else {
    rule.kind = ShapedCompare::Kind::tolerance;
    if (atol) rule.atol = read_formula(*atol, decls);
    if (rtol) rule.rtol = read_formula(*rtol, decls);
  }
  return rule;
}

}  // namespace

std::vector<ShapedCompare> read_shaped_compare(const Field& f, const ix::Declarations& decls) {
  std::vector<std::string_view> outputs;
  std::vector<int> tensors;
  for (std::size_t t = 0; t < decls.tensors.size(); ++t) {
    if (decls.tensors[t].role != ix::Role::output) continue;
    outputs.push_back(decls.tensors[t].name);
    tensors.push_back(static_cast<int>(t));
  }
  const MapFields m(f, outputs);
  std::vector<ShapedCompare> rules;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto rule = m.get(outputs[i]);
    if (!rule) {
      f.source().fail(f.mark(), f.path() + "." + std::string(outputs[i]),
                      "output '" + std::string(outputs[i]) +
                          "' has no compare rule (bitwise, {ulp: N}, {atol: F, rtol: F} or {bound: "
                          "accumulation})");
    }
    const ix::TensorDecl& out = decls.tensors[static_cast<std::size_t>(tensors[i])];
    rules.push_back(read_rule(*rule, out, decls));
    rules.back().output = tensors[i];
  }
  return rules;
}

}  // namespace kq::spec_detail
