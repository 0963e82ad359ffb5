// The tensors of a case as the arm sees them: each input's and output's name, dtype, shape and
// placement. Format 1: every tensor has the case's shape and the spec's dtype. Format 2: each has
// its declared dtype, and its declared extents at the case's dim values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kq/tensor.hpp"
#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

struct CaseTensorShape {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  Placement place;

  std::int64_t numel() const;
};

struct CaseShapes {
  std::vector<CaseTensorShape> inputs, outputs;
};

CaseShapes case_shapes(const Spec& spec, const Case& c);

// Format 2: the shape of `t` at dim values `dims` (one per dim of the program).
std::vector<std::int64_t> declared_shape(const ix::TensorDecl& t,
                                         const std::vector<std::int64_t>& dims);

}  // namespace kq
