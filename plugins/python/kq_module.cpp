#include "kq_module.hpp"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "tensor_object.hpp"

namespace py = pybind11;

namespace kq::python {
namespace {

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

// kind ("bitwise", "ulp", "tolerance"), max_ulp, atol, rtol.
py::object compare_object(const CompareRule& c) {
  py::dict d;
  d["kind"] = c.kind == CompareRule::Kind::bitwise ? "bitwise"
              : c.kind == CompareRule::Kind::ulp   ? "ulp"
                                                   : "tolerance";
  d["max_ulp"] = c.max_ulp;
  d["atol"] = c.atol;
  d["rtol"] = c.rtol;
  return namespace_of(d);
}

}  // namespace

PYBIND11_EMBEDDED_MODULE(kq, m) {
  define_tensor_class(m);
  py::exec(kq_api_source(), m.attr("__dict__"));  // sets the module's __doc__ too
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
  d["compute"] = std::string(to_string(spec.compute));
  d["inputs"] = spec.inputs;
  d["outputs"] = outputs;
  d["semantics"] = spec.semantics.text;
  d["semantics_ast"] = ast_nodes(spec.semantics);
  d["domain"] = spec.domain == Domain::ieee ? "ieee" : "finite";
  d["layouts"] = namespace_of(layouts);
  d["compare"] = compare_object(spec.compare);
  return namespace_of(d);
}

py::list tensor_objects(std::span<const TensorView> views, bool read_only) {
  py::list out;
  for (const TensorView& v : views) out.append(tensor_object(v, read_only));
  return out;
}

}  // namespace kq::python
