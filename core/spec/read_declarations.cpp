// dims, params, inputs, outputs, temporaries: the declarations the statements are parsed
// against. Names are checked here, where their positions are known, so that kq::ix's own checks
// of the declarations (reported without a position) never fire.
#include <algorithm>
#include <cmath>

#include "indexed/derived_dims.hpp"
#include "indexed/names.hpp"
#include "kq/half.hpp"
#include "kq/indexed.hpp"
#include "spec/sections.hpp"
#include "spec/shaped_sections.hpp"
#include "spec/suggest.hpp"

namespace kq::spec_detail {
namespace {

// A name not reserved by the statements language and not declared before, in any section.
void declare(const Named& n, std::string_view what, std::vector<Named>& declared) {
  if (ix::is_reserved(n.name)) {
    n.key.fail(std::string(what) + " '" + n.name +
               "' is named like a function, reduction or constant of the statements; choose "
               "another name");
  }
  if (n.name == "u") {
    n.key.fail(std::string(what) + " 'u' would hide u, the unit roundoff in tolerance formulas");
  }
  for (const Named& seen : declared) {
    if (seen.name == n.name) {
      n.key.fail("'" + n.name + "' is already declared (" + seen.key.path() + ", line " +
                 std::to_string(seen.key.mark().line + 1) + ")");
    }
  }
  declared.push_back(n);
}

ix::Extent read_extent(const Field& f, const std::vector<ix::DimDecl>& dims) {
  if (is_plain_scalar(f.node()) && !f.node().Scalar().empty() &&
      (f.node().Scalar()[0] >= '0' && f.node().Scalar()[0] <= '9')) {
    return ix::Extent(read_element_count(f));
  }
  const std::string name = read_identifier(f, "dim");
  if (ix::find_named(dims, name) < 0) {
    std::vector<std::string_view> known;
    for (const ix::DimDecl& d : dims) known.push_back(d.name);
    std::string message = "unknown dim '" + name + "'";
    if (auto near = closest_match(name, known)) message += "; did you mean '" + *near + "'?";
    f.fail(message + " (dims: " + join_names(known) + ")");
  }
  return ix::Extent(name);
}

// What a read outside the input gives: a value of its float dtype exactly (the padded tensor an
// arm builds holds it), infinities included (a max pooling's -inf).
double read_pad(const Field& f, DType dtype) {
  const double v = read_number(f);
  if (std::isnan(v)) f.fail("a pad is a number or an infinity, not NaN");
  if (is_integer(dtype)) {
    f.fail("a pad is for value inputs (f16, bf16, f32, f64); this input is " +
           std::string(to_string(dtype)));
  }
  if (round_to(dtype, v) != v) {
    f.fail("pad " + shown(f) + " is not a " + std::string(to_string(dtype)) +
           " value; give one the dtype holds exactly");
  }
  return v;
}

}  // namespace

std::vector<ix::DimDecl> read_dims(const Field& f, std::vector<Named>& declared) {
  std::vector<ix::DimDecl> dims;
  std::vector<Field> formulas;  // each derived dim's, to check once every dim is known
  for (const Named& n : read_named_map(f, "dim")) {
    declare(n, "dim", declared);
    static constexpr ix::DimKind kKinds[] = {ix::DimKind::free, ix::DimKind::reduced};
    if (n.value.node().IsMap()) {  // {derived: FORMULA}: computed from the base dims, free
      const MapFields m(n.value, {"derived"});
      const Field formula = m.require("derived");
      dims.push_back({n.name, ix::DimKind::free, read_string(formula)});
      if (dims.back().derived.find_first_not_of(" \t") == std::string::npos)
        formula.fail("a derived dim's formula is empty");
      formulas.push_back(formula);
      continue;
    }
    dims.push_back({n.name, kKinds[read_choice(n.value,
                                               "dim kind (free, reduced or {derived: "
                                               "FORMULA})",
                                               {"free", "reduced"})]});
    formulas.push_back(n.value);
  }
  if (dims.empty()) f.fail("at least one dim is required, e.g. {M: free, N: reduced}");
  const ix::Declarations d{dims, {}, {}};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].is_derived()) continue;
    if (auto bad = ix::check_dim_formula(d, static_cast<int>(i))) {
      formulas[i].fail("column " + std::to_string(bad->column) +
                       " of the formula: " + bad->message);
    }
  }
  if (std::all_of(dims.begin(), dims.end(), [](const auto& x) { return x.is_derived(); }))
    f.fail("every dim is derived; at least one is given at each point");
  return dims;
}

std::vector<ix::ParamDecl> read_params(const std::optional<Field>& f,
                                       std::vector<Named>& declared) {
  std::vector<ix::ParamDecl> params;
  if (!f) return params;
  for (const Named& n : read_named_map(*f, "param")) {
    declare(n, "param", declared);
    const double v = read_number(n.value);
    if (!std::isfinite(v)) n.value.fail("must be a finite number, got " + shown(n.value));
    params.push_back({n.name, v});
  }
  return params;
}

std::vector<ix::TensorDecl> read_tensors(const Field& f, ix::Role role,
                                         const std::vector<ix::DimDecl>& dims,
                                         std::vector<Named>& declared) {
  const std::string what(ix::to_string(role));
  std::vector<ix::TensorDecl> tensors;
  for (const Named& n : read_named_map(f, what)) {
    declare(n, what, declared);
    ix::TensorDecl t;
    t.name = n.name;
    t.role = role;
    MapFields m(n.value, role == ix::Role::input
                             ? std::vector<std::string_view>{"dtype", "shape", "pad"}
                             : std::vector<std::string_view>{"dtype", "shape"});
    static constexpr DType kDtypes[] = {DType::f32, DType::f64, DType::f16,    DType::bf16,
                                        DType::i32, DType::i64, DType::boolean};
    static const std::vector<std::string_view> kNames = {"f32", "f64", "f16", "bf16",
                                                         "i32", "i64", "bool"};
    // A temporary is float64 inside the reference; its dtype only says it may be gathered through.
    const auto dtype = m.get("dtype");
    if (dtype) {
      t.dtype = kDtypes[read_choice(*dtype, "dtype", kNames)];
    } else if (role == ix::Role::temporary) {
      t.dtype = DType::f64;
    } else {
      m.require("dtype");
    }
    for (const Field& e : read_list(m.require("shape"))) t.shape.push_back(read_extent(e, dims));
    if (t.shape.size() > static_cast<std::size_t>(kMaxRank)) {
      m.require("shape").fail("a tensor has at most " + std::to_string(kMaxRank) +
                              " dimensions, got " + std::to_string(t.shape.size()));
    }
    if (const auto pad = m.get("pad")) t.pad = read_pad(*pad, t.dtype);
    tensors.push_back(std::move(t));
  }
  if (tensors.empty() && role != ix::Role::temporary) {
    f.fail("at least one " + what + " is required");
  }
  return tensors;
}

}  // namespace kq::spec_detail
