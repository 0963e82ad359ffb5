// A format-2 spec (`kq_spec: 2`): the sections in schema order, so that the first problem in that
// order is the one reported. The declarations come first (dims, params, tensors), then the
// statements parsed against them, then what refers to both (compare, cost, points).
#include <algorithm>

#include "kq/indexed.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {
namespace {

// compute: what the operation computes in and what `u` is the unit roundoff of; f32 by default.
// tf32 is f32 whose products may read their operands as TF32 (ShapedContract::tf32).
void read_shaped_compute(const std::optional<Field>& f, ShapedContract& c) {
  if (!f) return;
  static constexpr DType kComputes[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                                        DType::f32};
  const std::size_t i = read_choice(*f, "compute", {"f32", "f64", "f16", "bf16", "tf32"});
  c.compute = kComputes[i];
  c.tf32 = i == 4;
}

// The layout reader's default alignment is one element: here, of the widest input or output.
DType widest_value_type(const ix::Declarations& d) {
  std::size_t widest = 2;
  for (const ix::TensorDecl& t : d.tensors)
    if (t.role != ix::Role::temporary) widest = std::max(widest, dtype_size(t.dtype));
  return widest == 8 ? DType::f64 : widest == 4 ? DType::f32 : DType::f16;
}

ix::Declarations read_declarations(const MapFields& top, std::vector<Named>& declared) {
  ix::Declarations d;
  d.dims = read_dims(top.require("dims"), declared);
  d.params = read_params(top.get("params"), declared);
  for (const auto& [key, role] :
       {std::pair{"inputs", ix::Role::input}, std::pair{"outputs", ix::Role::output},
        std::pair{"temporaries", ix::Role::temporary}}) {
    const auto f = role == ix::Role::temporary ? top.get(key) : top.require(key);
    if (!f) continue;
    for (ix::TensorDecl& t : read_tensors(*f, role, d.dims, declared))
      d.tensors.push_back(std::move(t));
  }
  return d;
}

CostOverrides read_cost(const std::optional<Field>& f, const ix::Declarations& d) {
  CostOverrides c;
  if (!f || f->node().IsNull()) return c;
  const MapFields m(*f, {"bytes", "flops"});
  if (auto v = m.get("bytes")) c.bytes = read_formula(*v, d);
  if (auto v = m.get("flops")) c.flops = read_formula(*v, d);
  return c;
}

void read_shaped_qualification(const std::optional<Field>& f, const ix::Program& p, Spec& spec) {
  if (!f) return;
  const MapFields m(*f, {"seed", "points", "grid", "hang_timeout_s", "max_abs_input"});
  read_qualification_seed(m, spec.qualification);
  spec.shaped->qualification_points = read_points(m, p, false);
  read_qualification_bounds(m, spec.qualification);
}

void read_shaped_timing(const Field& f, const ix::Program& p, Spec& spec) {
  const MapFields m(
      f, {"points", "grid", "l2", "modes", "min_rounds", "max_rounds", "max_seconds", "warmup_ms"});
  spec.shaped->timing_points = read_points(m, p, true);
  read_timing_policy(m, spec.timing);
}

// What arms read of the tensors beside the program: their names in order, and the first output's
// dtype as the spec's dtype.
void name_tensors(const std::shared_ptr<const ix::Program>& program, OpSpec& op) {
  op.program = program;
  bool first_output = true;
  for (const ix::TensorDecl& t : program->decls.tensors) {
    if (t.role == ix::Role::input) op.inputs.push_back(t.name);
    if (t.role != ix::Role::output) continue;
    op.outputs.push_back(OutputSpec{t.name, {}});
    if (first_output) op.dtype = t.dtype;
    first_output = false;
  }
}

}  // namespace

void parse_shaped(const Field& root, Spec& spec) {
  // The likeliest mistake: a format-1 spec marked 2. Say so rather than "unknown key".
  if (auto dtype = peek(root, "dtype")) {
    root.source().fail(dtype->mark(), "dtype",
                       "format 2 gives each tensor its own dtype (inputs: {x: {dtype: f32, shape: "
                       "[M, N]}}); a top-level dtype is format 1's (kq_spec: 1)");
  }
  const MapFields top(root, {"kq_spec", "op", "description", "dims", "params", "compute", "inputs",
                             "outputs", "temporaries", "semantics", "domain", "layouts", "compare",
                             "cost", "qualification", "timing", "decision"});
  spec.op.op = read_identifier(top.require("op"), "op name");
  if (auto d = top.get("description")) spec.op.description = read_string(*d);
  std::vector<Named> declared;
  ix::Declarations decls = read_declarations(top, declared);
  spec.shaped.emplace();
  ShapedContract& c = *spec.shaped;
  const YAML::Mark version = top.require("kq_spec").mark();
  c.version_line = version.line + 1;
  c.version_column = version.column + 1;
  read_shaped_compute(top.get("compute"), c);
  spec.op.compute = c.compute;
  spec.op.tf32 = c.tf32;
  c.program = std::make_shared<const ix::Program>(
      read_statements(top.require("semantics"), decls, declared));
  name_tensors(c.program, spec.op);
  if (auto d = top.get("domain")) {
    static constexpr Domain kDomains[] = {Domain::finite, Domain::ieee};
    spec.op.domain = kDomains[read_choice(*d, "domain", {"finite", "ieee"})];
  }
  spec.op.layouts = read_layouts(top.get("layouts"), widest_value_type(c.program->decls));
  c.compare = read_shaped_compare(top.require("compare"), c.program->decls);
  c.cost = read_cost(top.get("cost"), c.program->decls);
  read_shaped_qualification(top.get("qualification"), *c.program, spec);
  read_shaped_timing(top.require("timing"), *c.program, spec);
  spec.decision = read_decision(top.require("decision"));
}

}  // namespace kq::spec_detail
