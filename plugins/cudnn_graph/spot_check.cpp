#include "spot_check.hpp"

#include <cmath>

namespace kq::cudnn_graph {

namespace {

// The spacing of the dtype's subnormals: a result one step from the exact one is a rounding
// difference however small the inputs are.
double smallest_step(DType t) {
  switch (t) {
    case DType::f16:
      return 0x1p-24;
    case DType::bf16:
      return 0x1p-133;
    default:
      return 0x1p-149;
  }
}

}  // namespace

bool close_enough(float got, float want, double scale, DType t, const CompareRule& rule) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (!std::isfinite(got)) return false;
  // Generous: cuDNN's transcendental functions need not be correctly rounded, and this check
  // only has to tell a working plan from a broken one.
  // In half, results are rounded to the dtype: two of its ulps (2^-9 for f16, 2^-6 for bf16).
  const double rel = t == DType::f16 ? 0x1p-9 : t == DType::bf16 ? 0x1p-6 : 1e-4;
  const double w = static_cast<double>(want);
  double tol = rel * std::fmax(std::fabs(w), scale) + smallest_step(t);
  if (rule.kind == CompareRule::Kind::tolerance)
    tol = std::fmax(tol, rule.atol + rule.rtol * std::fabs(w));
  return std::fabs(static_cast<double>(got) - w) <= tol;
}

}  // namespace kq::cudnn_graph
