// The `kq` module the python plugin gives its arms: kq.Arm (the base class of an arm),
// kq.Unsupported (raised to refuse), kq.Tensor (kq's views, tensor_object.hpp) and the helpers of
// kq_api.py, the module's Python part and its documentation. Every function here needs the GIL.
//
// The spec an arm sees is a types.SimpleNamespace: op, description, dtype ("f32", "f64" ...),
// inputs (names), outputs (each with name and may_alias), semantics (the text), semantics_ast
// (the nodes in post-order: op, value, input, args), domain ("finite", "ieee") and layouts
// (contiguous_only, min_alignment_bytes, ranks), compare (kind "bitwise" | "ulp" |
// "tolerance", max_ulp, atol, rtol), format (1, or 2 for a shaped spec) and program (None for
// format 1). A format-2 spec's program holds its declarations and parsed statements
// (kq/indexed.hpp), each entry a namespace:
//   dims        name, kind ("free" | "reduced")
//   params      name, value
//   tensors     name, role ("input" | "temporary" | "output"), dtype ("f32" ... "i64", "bool"),
//               shape (a list of dim names and ints; [] for a scalar)
//   indices     name, extent (a dim name or an int), statement (the one that binds it)
//   nodes       kind ("number" | "param" | "dim" | "index" | "access" | "apply" | "reduce" |
//               "scan"), value (a number's), ref (the param, dim, index or tensor, by position),
//               op (an apply's kq op name: "add", "exp", "max" ..., else None), args (operand
//               nodes, all earlier), over (a reduction's or scan's index variables, outermost
//               first), reduction ("sum" | "prod" | "max" | "min" | "argmax" | "argmin", else
//               None), scan ("cumsum" | "cumprod", else None), exclusive, reverse
//   statements  tensor (the one assigned), lhs (its index variables), root (a node), scan_index
//               (the index its scans run along, or -1), line, text
// The spec's inputs and outputs name the input and output tensors in declaration order, as the
// host passes them to run().
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
