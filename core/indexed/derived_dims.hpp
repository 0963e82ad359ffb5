// Derived dims (DimDecl::derived): integer formulas over the base dims, computed wherever a point
// is made (a spec's points, --points, the planner's), so that every later stage sees one value
// per dim and never a pair the formula does not tie. The grammar: integers, base dims' names,
// + - * /, unary minus and parentheses; / rounds down (floor), as the frameworks' output sizes do
// for the lengths they admit.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kq/indexed.hpp"

namespace kq::ix {

struct DimFormulaError {
  std::string message;
  int column = 1;  // 1-based, in the formula's text
};

// Whether dim `dim`'s formula parses and names base dims only.
std::optional<DimFormulaError> check_dim_formula(const Declarations& d, int dim);

// Overwrites each derived dim's value in `dims` (one per dim, base dims given) with its
// formula's. The reason where one is below 1, divides by 0 or leaves int64 ("OH = (H - 11) / 11
// + 1 is 0 at H=5; every dim is at least 1"); nullopt when all are fine.
std::optional<std::string> complete_dims(const Declarations& d, std::vector<std::int64_t>& dims);

// complete_dims, and where a derived dim falls below 1 (a window longer than the input), the base
// dims its formula names grow (2 n + 1) until it does not, up to 24 times. Whether it succeeded.
bool complete_dims_growing(const Declarations& d, std::vector<std::int64_t>& dims);

// The base dims dim `dim`'s formula names (positions in d.dims), each once; empty for a base dim.
std::vector<int> formula_dims(const Declarations& d, int dim);

}  // namespace kq::ix
