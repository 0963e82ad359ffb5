#include "spot_check.hpp"

#include <cmath>

namespace kq::cudnn_graph {

bool close_enough(float got, float want, double scale, DType t) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (!std::isfinite(got)) return false;
  // Generous: cuDNN's transcendental functions need not be correctly rounded, and this check
  // only has to tell a working plan from a broken one.
  // In half, results are rounded to the dtype: two of its ulps (2^-9 for f16, 2^-6 for bf16).
  const double rel = t == DType::f16 ? 0x1p-9 : t == DType::bf16 ? 0x1p-6 : 1e-4;
  double tol = rel * std::fmax(std::fabs(static_cast<double>(want)), scale) + 1e-30;
  return std::fabs(static_cast<double>(got) - static_cast<double>(want)) <= tol;
}

}  // namespace kq::cudnn_graph
