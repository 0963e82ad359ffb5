// The `kq` module the python plugin gives its arms: kq.Arm (the base class of an arm),
// kq.Unsupported (raised to refuse), kq.Tensor (kq's views, tensor_object.hpp) and the helpers of
// kq_api.py, the module's Python part and its documentation. Every function here needs the GIL.
//
// The spec an arm sees is a types.SimpleNamespace: op, description, dtype ("f32", "f64"),
// inputs (names), outputs (each with name and may_alias), semantics (the text), semantics_ast
// (the nodes in post-order: op, value, input, args), domain ("finite", "ieee") and layouts
// (contiguous_only, min_alignment_bytes, ranks) and compare (kind "bitwise" | "ulp" |
// "tolerance", max_ulp, atol, rtol).
#pragma once
#include <pybind11/pybind11.h>

#include <span>

#include "kq/arm.hpp"

namespace kq::python {

// The text of kq_api.py, compiled into the plugin (the build generates its definition).
const char* kq_api_source();

pybind11::module_ kq_module();
pybind11::object spec_object(const OpSpec& spec);
// The views as kq.Tensor objects (read-only when `read_only`).
pybind11::list tensor_objects(std::span<const TensorView> views, bool read_only);

}  // namespace kq::python
