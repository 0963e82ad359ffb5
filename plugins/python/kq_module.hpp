// The `kq` module the python plugin gives its arms: kq.Arm (the base class of an arm),
// kq.Unsupported (raised to refuse a problem or a view), and the conversions from kq's types to
// the plain Python objects an arm sees. Every function here needs the GIL.
//
// An arm, in a file under plugins/python/arms/ or a folder of KQ_PYTHON_ARMS:
//
//   import kq, numpy as np
//   class MyArm(kq.Arm):
//       name, family, device, version = "my_arm", "numpy", "cpu", "1"
//       def supports(self, spec):       # None, or why not (a string)
//           return None if spec.op == "residual_relu" else "only residual_relu"
//       def prepare(self, problem):     # problem.spec, problem.inputs, problem.outputs
//           pass
//       def run(self, inputs, outputs): # numpy arrays over kq's buffers, no copy
//           np.add(inputs[0], inputs[1], out=outputs[0])
//
// The spec is a types.SimpleNamespace: op, description, dtype ("f32", "f64"), inputs (names),
// outputs (each with name and may_alias), semantics (the text), semantics_ast (the nodes in
// post-order: op, value, input, args), domain ("finite", "ieee") and layouts (contiguous_only,
// min_alignment_bytes, ranks). CPU tensors are numpy arrays viewing kq's memory, strides in
// bytes as numpy counts them; inputs are read-only.
#pragma once
#include <pybind11/pybind11.h>

#include <span>

#include "kq/arm.hpp"

namespace kq::python {

pybind11::module_ kq_module();
pybind11::object spec_object(const OpSpec& spec);
// The views as Python objects: numpy arrays for CPU tensors (read-only when `read_only`).
pybind11::list tensor_objects(std::span<const TensorView> views, bool read_only);

}  // namespace kq::python
