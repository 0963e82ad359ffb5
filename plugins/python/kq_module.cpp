#include "kq_module.hpp"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <string>
#include <string_view>

#include "kq/indexed.hpp"
#include "kq/indexed_text.hpp"
#include "kq/matmul_form.hpp"
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

std::string_view kind_name(ix::NodeKind k) {
  switch (k) {
    case ix::NodeKind::number:
      return "number";
    case ix::NodeKind::param:
      return "param";
    case ix::NodeKind::dim:
      return "dim";
    case ix::NodeKind::index:
      return "index";
    case ix::NodeKind::access:
      return "access";
    case ix::NodeKind::apply:
      return "apply";
    case ix::NodeKind::reduce:
      return "reduce";
    case ix::NodeKind::scan:
      return "scan";
  }
  return "?";
}

// A dim's name, or a constant extent as an int.
py::object extent_object(const ix::Extent& e) {
  if (e.is_dim()) return py::str(e.name);
  return py::int_(e.constant);
}

// The declarations and the parsed statements as plain Python data (kq_module.hpp lists the
// fields). A node's fields that do not apply to its kind are None (op, reduction, scan) or
// their defaults (value 0.0, ref -1, args and over empty, exclusive and reverse False).
py::object program_object(const ix::Program& p) {
  py::list dims, params, tensors, indices, nodes, statements;
  for (const ix::DimDecl& d : p.decls.dims) {
    py::dict o;
    o["name"] = d.name;
    o["kind"] = d.kind == ix::DimKind::free ? "free" : "reduced";
    o["derived"] = d.is_derived() ? py::object(py::str(d.derived)) : py::object(py::none());
    dims.append(namespace_of(o));
  }
  for (const ix::ParamDecl& d : p.decls.params) {
    py::dict o;
    o["name"] = d.name;
    o["value"] = d.value;
    params.append(namespace_of(o));
  }
  for (const ix::TensorDecl& t : p.decls.tensors) {
    py::dict o;
    o["name"] = t.name;
    o["role"] = std::string(to_string(t.role));
    o["dtype"] = std::string(to_string(t.dtype));
    py::list shape;
    for (const ix::Extent& e : t.shape) shape.append(extent_object(e));
    o["shape"] = shape;
    o["pad"] = t.pad ? py::object(py::float_(*t.pad)) : py::object(py::none());
    tensors.append(namespace_of(o));
  }
  for (const ix::IndexVar& v : p.indices) {
    py::dict o;
    o["name"] = v.name;
    o["extent"] = extent_object(v.extent);
    o["statement"] = v.statement;
    o["ranged"] = v.ranged;
    indices.append(namespace_of(o));
  }
  for (const ix::Node& n : p.nodes) {
    py::dict o;
    o["kind"] = std::string(kind_name(n.kind));
    o["value"] = n.value;
    o["ref"] = n.ref;
    o["op"] = n.kind == ix::NodeKind::apply ? py::object(py::str(std::string(to_string(n.op))))
                                            : py::object(py::none());
    o["args"] = n.args;
    o["over"] = n.over;
    o["reduction"] = n.kind == ix::NodeKind::reduce
                         ? py::object(py::str(std::string(ix::to_string(n.reduction))))
                         : py::object(py::none());
    o["scan"] = n.kind != ix::NodeKind::scan     ? py::object(py::none())
                : n.scan == ix::ScanKind::cumsum ? py::object(py::str("cumsum"))
                                                 : py::object(py::str("cumprod"));
    o["exclusive"] = n.exclusive;
    o["reverse"] = n.reverse;
    nodes.append(namespace_of(o));
  }
  for (const ix::Statement& s : p.statements) {
    py::dict o;
    o["tensor"] = s.tensor;
    o["lhs"] = s.lhs;
    o["root"] = s.root;
    o["scan_index"] = s.scan_index;
    o["line"] = s.line;
    o["text"] = s.text;
    statements.append(namespace_of(o));
  }
  py::dict d;
  // What arms compare to recognise the computation (kq/indexed_text.hpp; kq.computes).
  d["canonical"] = ix::canonical_text(p);
  d["dims"] = dims;
  d["params"] = params;
  d["tensors"] = tensors;
  d["indices"] = indices;
  d["nodes"] = nodes;
  d["statements"] = statements;
  // The matrix product the statements are, where they are one (kq/matmul_form.hpp): A, B and
  // the bias by position among the inputs, the layouts and the epilogue; None otherwise.
  py::object matmul = py::none();
  if (const std::optional<ix::MatmulForm> f = ix::match_matmul(p)) {
    py::dict m;
    m["a"] = f->a;
    m["b"] = f->b;
    m["bias"] = f->bias >= 0 ? py::object(py::int_(f->bias)) : py::object(py::none());
    m["batch"] = f->batch;
    m["m_dims"] = f->m_dims;
    m["n_dims"] = f->n_dims;
    m["a_transposed"] = f->a_transposed;
    m["b_transposed"] = f->b_transposed;
    m["gelu"] = f->gelu;
    matmul = namespace_of(m);
  }
  d["matmul"] = matmul;
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
  d["tf32"] = spec.tf32;  // compute f32, TF32 products admitted
  d["inputs"] = spec.inputs;
  d["outputs"] = outputs;
  d["semantics"] = spec.semantics.text;
  d["semantics_ast"] = ast_nodes(spec.semantics);
  d["domain"] = spec.domain == Domain::ieee ? "ieee" : "finite";
  d["layouts"] = namespace_of(layouts);
  d["compare"] = compare_object(spec.compare);
  d["format"] = spec.program ? 2 : 1;
  d["program"] = spec.program ? program_object(*spec.program) : py::object(py::none());
  return namespace_of(d);
}

py::list tensor_objects(std::span<const TensorView> views, bool read_only) {
  py::list out;
  for (const TensorView& v : views) out.append(tensor_object(v, read_only));
  return out;
}

}  // namespace kq::python
