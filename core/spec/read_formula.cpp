// A formula (tolerance, cost) written as a YAML scalar: "8 * u * sqrt(N)". Errors are placed at
// their column inside the scalar where the scalar is written on one line.
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {

Formula read_formula(const Field& f, const ix::Declarations& decls) {
  const std::string text = read_string(f);
  std::vector<std::string> dims, params;
  for (const ix::DimDecl& d : decls.dims) dims.push_back(d.name);
  for (const ix::ParamDecl& p : decls.params) params.push_back(p.name);
  FormulaParse parsed = parse_formula(text, dims, params);
  if (parsed.formula) return std::move(*parsed.formula);
  const FormulaError e = parsed.error.value_or(FormulaError{1, "cannot parse"});
  if (auto at = scalar_position(f, text, 1, e.column)) f.source().fail(*at, f.path(), e.message);
  f.fail(e.message + " (at column " + std::to_string(e.column) + " of the formula)");
}

}  // namespace kq::spec_detail
