// What the tests of nvrtc_jit's row kernels share, on the host (tests/unit/
// test_nvrtc_emulated.cpp) and on a GPU (tests/gpu/test_nvrtc_rows.cpp): a case's dims as text,
// a tensor's shape at them, the input values they draw, and when an output element is close
// enough to the float64 reference.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "kq/tensor.hpp"

namespace kq::test::rows {

inline std::string dims_text(const ix::DimValues& dims) {
  std::string s;
  for (const auto& [name, value] : dims) s += " " + name + "=" + std::to_string(value);
  return s;
}

inline std::vector<std::int64_t> shape_of(const ix::TensorDecl& d, const ix::DimValues& dims) {
  std::vector<std::int64_t> s;
  for (const auto& e : d.shape) s.push_back(e.is_dim() ? dims.at(e.name) : e.constant);
  return s;
}

// Inputs: uniform in [-4, 4]; the integers there (equal values in every row); +-e^t, t uniform
// in [-1/2, 1/2] (products of thousands stay finite); or e^t (logs defined). A bool input is
// 0 or 1; an i32 or i64 input, where `positions` > 0, a position in [0, positions).
// ties: small integers (argmax's first of equals); ties_nan: the same with about one NaN in 40
// (the first NaN final).
enum class Draw { uniform, ties, ties_nan, near_one, positive };

inline double draw(Draw how, DType t, std::mt19937_64& rng, std::int64_t positions) {
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  double x = u(rng);
  if (t == DType::boolean) x = x > 0 ? 1 : 0;
  if (how == Draw::ties || how == Draw::ties_nan) x = std::round(x);
  if (how == Draw::ties_nan && t != DType::boolean && !is_integer(t) && u(rng) > 3.8)
    x = std::nan("");
  if (how == Draw::near_one) x = std::copysign(std::exp(x / 8), u(rng));
  if (how == Draw::positive) x = std::exp(x / 8);
  if (positions > 0 && (t == DType::i32 || t == DType::i64))
    x = std::floor((x + 4) / 8 * static_cast<double>(positions));
  return x;
}

// Outputs compared exactly: where the kernel selects or copies a value (relu, max, an index).
inline bool exact(const std::string& spec, DType t) {
  return spec.find("relu") != std::string::npos ||
         spec.find("max_reduction") != std::string::npos || is_integer(t);
}

// 2 units of the output's precision relative, and as much absolute at 1 (y = ... + b cancels in
// layer norm), beside twice the accumulation bound `bound` (in units of float32's u: sums and
// differences of large values, a triplet margin); an infinity, or an exact output, equal.
inline bool close_enough(double got, double want, double bound, DType t, bool exact) {
  if (exact || std::isinf(want)) return got == want;
  const double unit = t == DType::bf16 ? 0x1p-8 : t == DType::f16 ? 0x1p-11 : 0x1p-20;
  return std::fabs(got - want) <= 2 * unit * (std::fabs(want) + 1) + 2 * bound * 0x1p-24;
}

}  // namespace kq::test::rows
