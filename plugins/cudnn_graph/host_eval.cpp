#include "host_eval.hpp"

#include <cmath>
#include <vector>

namespace kq::cudnn_graph {

namespace {
double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}
double nan_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;  // min(-0, +0) = -0
  return a < b ? a : b;
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

double eval_op(Op op, double a, double b, double c) {
  switch (op) {
    case Op::constant:
    case Op::input:
      return a;
    case Op::neg:
      return -a;
    case Op::relu:
      return (a > 0 || std::isnan(a)) ? a : 0.0;
    case Op::abs:
      return std::fabs(a);
    case Op::exp:
      return std::exp(a);
    case Op::log:
      return std::log(a);
    case Op::sqrt:
      return std::sqrt(a);
    case Op::tanh:
      return std::tanh(a);
    case Op::sigmoid:
      return sigmoid(a);
    case Op::erf:
      return std::erf(a);
    case Op::gelu:
      return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
    case Op::silu:
      return a * sigmoid(a);
    case Op::add:
      return a + b;
    case Op::sub:
      return a - b;
    case Op::mul:
      return a * b;
    case Op::div:
      return a / b;
    case Op::max:
      return nan_max(a, b);
    case Op::min:
      return nan_min(a, b);
    case Op::lt:
      return a < b ? 1.0 : 0.0;
    case Op::le:
      return a <= b ? 1.0 : 0.0;
    case Op::gt:
      return a > b ? 1.0 : 0.0;
    case Op::ge:
      return a >= b ? 1.0 : 0.0;
    case Op::eq:
      return a == b ? 1.0 : 0.0;
    case Op::ne:
      return a != b ? 1.0 : 0.0;
    case Op::select:
      return a != 0 ? b : c;  // (condition, then, else); a NaN condition is != 0
    case Op::clamp:
      return nan_min(nan_max(a, b), c);
  }
  return std::nan("");
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
