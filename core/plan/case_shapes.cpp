#include "plan/case_shapes.hpp"

#include <stdexcept>

namespace kq {

std::int64_t CaseTensorShape::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<std::int64_t> declared_shape(const ix::TensorDecl& t,
                                         const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> shape;
  for (const ix::Extent& e : t.shape) {
    if (!e.is_dim()) {
      shape.push_back(e.constant);
      continue;
    }
    if (e.dim < 0 || static_cast<std::size_t>(e.dim) >= dims.size())
      throw std::logic_error("tensor " + t.name + ": extent " + e.name + " has no dim value");
    shape.push_back(dims[static_cast<std::size_t>(e.dim)]);
  }
  return shape;
}

namespace {

// A case built by hand (tests, the timing loop) may leave its placements out: contiguous.
Placement placement(const std::vector<Placement>& places, std::size_t k) {
  return k < places.size() ? places[k] : Placement{};
}

}  // namespace

CaseShapes case_shapes(const Spec& spec, const Case& c) {
  CaseShapes s;
  if (!spec.op.program) {
    for (std::size_t i = 0; i < spec.op.inputs.size(); ++i)
      s.inputs.push_back({spec.op.inputs[i], spec.op.dtype, c.shape, placement(c.inputs, i)});
    for (std::size_t o = 0; o < spec.op.outputs.size(); ++o)
      s.outputs.push_back(
          {spec.op.outputs[o].name, spec.op.dtype, c.shape, placement(c.outputs, o)});
    return s;
  }
  for (const ix::TensorDecl& t : spec.op.program->decls.tensors) {
    if (t.role == ix::Role::temporary) continue;
    auto& list = t.role == ix::Role::input ? s.inputs : s.outputs;
    const auto& places = t.role == ix::Role::input ? c.inputs : c.outputs;
    list.push_back({t.name, t.dtype, declared_shape(t, c.dims), placement(places, list.size())});
  }
  return s;
}

}  // namespace kq
