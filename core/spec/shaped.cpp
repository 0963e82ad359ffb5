#include "spec/shaped.hpp"

#include <cmath>

namespace kq {

double unit_roundoff(DType compute) {
  switch (compute) {
    case DType::f64:
      return std::ldexp(1.0, -53);
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

double contract_roundoff(const ShapedContract& c) {
  return c.tf32 ? std::ldexp(1.0, -11) : unit_roundoff(c.compute);
}

double evaluate(const Formula& f, const ShapedContract& c, const Point& p) {
  std::vector<double> params;
  params.reserve(c.program->decls.params.size());
  for (const ix::ParamDecl& d : c.program->decls.params) params.push_back(d.value);
  return evaluate(f, p.dims, params, contract_roundoff(c));
}

}  // namespace kq
