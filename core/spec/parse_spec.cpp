// parse_spec: YAML text -> a validated Spec. The raw text is checked first, then the YAML
// structure, and only then are the sections read, in schema order, so the first problem in that
// order is the one reported.
#include "spec/map_fields.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"
#include "spec/text_checks.hpp"
#include "spec/yaml_document.hpp"
#include "util/sha256.hpp"

namespace kq {
namespace spec_detail {
namespace {

constexpr std::int64_t kFormatVersion = 1;
constexpr std::int64_t kShapedFormatVersion = 2;

// kq_spec is read first: another version has other keys, so it decides how to read on.
std::int64_t read_format_version(const Field& root) {
  if (auto v = peek(root, "kq_spec")) {
    const std::int64_t version = read_int(*v);
    if (version != kFormatVersion && version != kShapedFormatVersion) {
      v->fail("unsupported kq_spec version " + std::to_string(version) +
              "; this kq reads versions 1 and 2");
    }
    return version;
  }
  return kFormatVersion;  // the missing key is reported with format 1's keys
}

// compute: the precision the contract evaluates in, at least the dtype's. Default: the dtype
// for f32 and f64, f32 for the half types ("load half, compute in float, round once").
DType read_compute(const std::optional<Field>& f, DType dtype) {
  const DType fallback = is_half(dtype) ? DType::f32 : dtype;
  if (!f) return fallback;
  static constexpr DType kComputes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
  const DType c = kComputes[read_choice(*f, "compute", {"f32", "f64", "f16", "bf16"})];
  const auto rank = [](DType t) { return t == DType::f64 ? 3 : t == DType::f32 ? 2 : 1; };
  if (rank(c) < rank(dtype) || (is_half(c) && c != dtype))
    f->fail("compute " + std::string(to_string(c)) + " is narrower than dtype " +
            std::string(to_string(dtype)) + " (or another half format); use " +
            std::string(to_string(dtype)) + ", f32 or f64");
  return c;
}

OpSpec read_contract(const MapFields& top) {
  OpSpec op;
  op.op = read_identifier(top.require("op"), "op name");
  if (auto d = top.get("description")) op.description = read_string(*d);
  static constexpr DType kDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
  op.dtype = kDTypes[read_choice(top.require("dtype"), "dtype", {"f32", "f64", "f16", "bf16"})];
  op.compute = read_compute(top.get("compute"), op.dtype);
  std::vector<Field> input_fields;
  op.inputs = read_inputs(top.require("inputs"), input_fields);
  op.outputs = read_outputs(top.require("outputs"), op.inputs);
  op.semantics = read_semantics(top.require("semantics"), op.inputs, input_fields);
  if (auto d = top.get("domain")) {
    static constexpr Domain kDomains[] = {Domain::finite, Domain::ieee};
    op.domain = kDomains[read_choice(*d, "domain", {"finite", "ieee"})];
  }
  op.layouts = read_layouts(top.get("layouts"), op.dtype);
  return op;
}

}  // namespace
}  // namespace spec_detail

Spec parse_spec(const std::string& text, const std::string& file) {
  using namespace spec_detail;
  const Source src{file, text};
  check_text(src);
  const Document doc = load_document(src);
  const Field root(src, doc.root, "", doc.start);
  Spec spec;
  spec.path = file;
  spec.text = text;
  spec.sha256 = sha256_hex(text);
  if (read_format_version(root) == kShapedFormatVersion) {
    parse_shaped(root, spec);
    return spec;
  }
  const MapFields top(
      root, {"kq_spec", "op", "description", "dtype", "compute", "inputs", "outputs", "semantics",
             "domain", "layouts", "compare", "qualification", "timing", "decision"});
  top.require("kq_spec");

  spec.op = read_contract(top);
  spec.op.compare = read_compare(top.require("compare"));
  spec.qualification = read_qualification(top.get("qualification"));
  spec.timing = read_timing(top.require("timing"));
  spec.decision = read_decision(top.require("decision"));
  return spec;
}

}  // namespace kq
