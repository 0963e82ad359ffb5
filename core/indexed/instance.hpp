// A program bound to concrete dim values and input buffers: every extent, shape and stride as a
// number, checked once before anything is evaluated.
#pragma once
#include <cstdint>
#include <vector>

#include "indexed/evaluate.hpp"

namespace kq::ix {

struct Instance {
  const Program* program = nullptr;
  std::vector<std::int64_t> dims;                  // by dim
  std::vector<std::int64_t> extents;               // by index variable
  std::vector<std::vector<std::int64_t>> shapes;   // by tensor
  std::vector<std::vector<std::int64_t>> strides;  // by tensor, row-major
  std::vector<const Buffer*> inputs;               // by tensor; null for the assigned ones
  std::vector<int> first_node;                     // by statement: its first node

  std::int64_t numel(int tensor) const;
};

// Throws EvalError for a dim without a value (or a negative one), an input missing or of the
// wrong dtype or shape.
Instance make_instance(const Program& p, const DimValues& dims, const Tensors& inputs);

// "[2, 3]"
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace kq::ix
