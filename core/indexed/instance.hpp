// A program bound to concrete dim values and input buffers: every extent, shape and stride as a
// number, checked once before anything is evaluated.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "indexed/evaluate.hpp"

namespace kq::ix {

// An index expression folded to c + sum(coef[k] * idx[var[k]]) for these dims: what
// Machine::subscript computes by walking its nodes, in one pass (the walk took two thirds of a
// 3-D pooling's reference). `ok` false where the expression is not of that form (a gather, a
// product of two indices, more than kMaxVars indices).
struct AffineIndex {
  static constexpr int kMaxVars = 4;
  bool ok = false;
  int n = 0;
  std::array<int, kMaxVars> var{};
  std::array<std::int64_t, kMaxVars> coef{};
  std::int64_t c = 0;
};

struct Instance {
  const Program* program = nullptr;
  std::vector<std::int64_t> dims;                  // by dim
  std::vector<std::int64_t> extents;               // by index variable
  std::vector<std::vector<std::int64_t>> shapes;   // by tensor
  std::vector<std::vector<std::int64_t>> strides;  // by tensor, row-major
  std::vector<const Buffer*> inputs;               // by tensor; null for the assigned ones
  std::vector<int> first_node;                     // by statement: its first node
  std::vector<AffineIndex> affine;                 // by node (empty: none folded)

  std::int64_t numel(int tensor) const;
};

// Throws EvalError for a dim without a value (or a negative one), an input missing or of the
// wrong dtype or shape.
Instance make_instance(const Program& p, const DimValues& dims, const Tensors& inputs);

// "[2, 3]"
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace kq::ix
