#include "host_eval.hpp"

#include <cmath>
#include <vector>

#include "kq/semantics.hpp"

namespace kq::cudnn_graph {

// The reference's own definitions (kq/semantics.hpp): folded constants and spot checks agree
// with what qualification will compare against.
double eval_op(Op op, double a, double b, double c) {
  if (op == Op::constant || op == Op::input) return a;
  return ref::apply(op, a, b, c);
}

double eval_expr(const Expr& e, std::span<const double> inputs) {
  std::vector<double> v(e.nodes.size());
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    const ExprNode& n = e.nodes[i];
    if (n.op == Op::constant) {
      v[i] = n.value;
    } else if (n.op == Op::input) {
      v[i] = inputs[static_cast<std::size_t>(n.input)];
    } else {
      double a = n.args[0] >= 0 ? v[static_cast<std::size_t>(n.args[0])] : 0.0;
      double b = n.args[1] >= 0 ? v[static_cast<std::size_t>(n.args[1])] : 0.0;
      double c = n.args[2] >= 0 ? v[static_cast<std::size_t>(n.args[2])] : 0.0;
      v[i] = eval_op(n.op, a, b, c);
    }
  }
  return v.empty() ? 0.0 : v.back();
}

bool close_enough(float got, float want, double scale) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (!std::isfinite(got)) return false;
  // Generous: cuDNN's transcendental functions need not be correctly rounded, and this check
  // only has to tell a working plan from a broken one.
  double tol = 1e-4 * std::fmax(std::fabs(static_cast<double>(want)), scale) + 1e-30;
  return std::fabs(static_cast<double>(got) - static_cast<double>(want)) <= tol;
}

}  // namespace kq::cudnn_graph
