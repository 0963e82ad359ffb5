#include "kq_module.hpp"

#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace kq::python {
namespace {

constexpr const char* kModuleSource = R"(
class Unsupported(Exception):
    """Raised by an arm's supports(), prepare() or run() to refuse, with the reason."""


def outside_contract(spec, inputs, outputs):
    """Why these numpy arrays are outside the spec's layout contract, or None: a rank the spec
    does not list, a strided view where it admits contiguous ones only, a pointer below its
    alignment, or an output sharing memory with an input it may not alias."""
    import numpy as np
    named = list(zip(spec.inputs, inputs)) + [(o.name, a) for o, a in zip(spec.outputs, outputs)]
    for name, a in named:
        if a.ndim not in spec.layouts.ranks:
            return "%s has rank %d, not among the spec's ranks" % (name, a.ndim)
        if spec.layouts.contiguous_only and not a.flags.c_contiguous:
            return "%s is not contiguous" % name
        if a.__array_interface__["data"][0] % spec.layouts.min_alignment_bytes:
            return "%s is aligned below %d bytes" % (name, spec.layouts.min_alignment_bytes)
    for o, a in zip(spec.outputs, outputs):
        for name, x in zip(spec.inputs, inputs):
            if name not in o.may_alias and np.shares_memory(a, x):
                return "%s overlaps %s" % (o.name, name)
    return None


class Arm:
    """The base of an arm written in Python. Set name, family, device ("cpu" or "cuda") and
    version; override supports(spec), prepare(problem) and run(inputs, outputs)."""
    name = None
    family = "python"
    device = "cpu"
    version = "1"

    def supports(self, spec):
        return None

    def prepare(self, problem):
        pass

    def run(self, inputs, outputs):
        raise NotImplementedError(type(self).__name__ + ".run")
)";

py::object namespace_of(const py::dict& fields) {
  return py::module_::import("types").attr("SimpleNamespace")(**fields);
}

py::list ast_nodes(const Expr& e) {
  py::list nodes;
  for (const ExprNode& n : e.nodes) {
    py::dict d;
    d["op"] = std::string(to_string(n.op));
    d["value"] = n.value;
    d["input"] = n.input;
    py::list args;
    for (int i = 0; i < arity(n.op); ++i) args.append(n.args[i]);
    d["args"] = args;
    nodes.append(namespace_of(d));
  }
  return nodes;
}

py::object numpy_view(const TensorView& v, bool read_only) {
  const auto item = static_cast<py::ssize_t>(dtype_size(v.dtype));
  std::vector<py::ssize_t> shape, strides;
  for (int i = 0; i < v.rank; ++i) {
    shape.push_back(v.shape[i]);
    strides.push_back(v.strides[i] * item);
  }
  // A base object keeps numpy from copying: the array views kq's memory, which kq owns.
  py::capsule owner(v.data, [](void*) {});
  py::array a = v.dtype == DType::f32
                    ? py::array(py::dtype::of<float>(), shape, strides, v.data, owner)
                    : py::array(py::dtype::of<double>(), shape, strides, v.data, owner);
  if (read_only) a.attr("setflags")(py::arg("write") = false);
  return a;
}

}  // namespace

PYBIND11_EMBEDDED_MODULE(kq, m) {
  m.doc() = "kq's API for arms written in Python (see plugins/python/kq_module.hpp)";
  py::exec(kModuleSource, m.attr("__dict__"));
}

py::module_ kq_module() { return py::module_::import("kq"); }

py::object spec_object(const OpSpec& spec) {
  py::list outputs;
  for (const auto& o : spec.outputs) {
    py::dict d;
    d["name"] = o.name;
    d["may_alias"] = o.may_alias;
    outputs.append(namespace_of(d));
  }
  py::dict layouts;
  layouts["contiguous_only"] = spec.layouts.contiguous_only;
  layouts["min_alignment_bytes"] = spec.layouts.min_alignment_bytes;
  layouts["ranks"] = spec.layouts.ranks;
  py::dict d;
  d["op"] = spec.op;
  d["description"] = spec.description;
  d["dtype"] = std::string(to_string(spec.dtype));
  d["inputs"] = spec.inputs;
  d["outputs"] = outputs;
  d["semantics"] = spec.semantics.text;
  d["semantics_ast"] = ast_nodes(spec.semantics);
  d["domain"] = spec.domain == Domain::ieee ? "ieee" : "finite";
  d["layouts"] = namespace_of(layouts);
  return namespace_of(d);
}

py::list tensor_objects(std::span<const TensorView> views, bool read_only) {
  py::list out;
  for (const TensorView& v : views) {
    if (v.device != Device::cpu)
      throw std::runtime_error("CUDA tensors are not offered to Python arms yet");
    out.append(numpy_view(v, read_only));
  }
  return out;
}

}  // namespace kq::python
