// The readers of a format-2 spec, one file each; parse_shaped.cpp puts them together. Internal to
// the spec loader.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kq/indexed.hpp"
#include "spec/map_fields.hpp"
#include "spec/shaped.hpp"
#include "spec/spec.hpp"
#include "spec/yaml_field.hpp"

namespace kq::spec_detail {

// named_map.cpp: a map whose keys are names the spec declares (dims, params, tensors): each an
// identifier, given once. A null value (`params:`) reads as an empty map.
struct Named {
  std::string name;
  Field key;  // where it was named
  Field value;
};
std::vector<Named> read_named_map(const Field& f, std::string_view what);

// scalar_position.cpp: the file position of `line`:`column` (1-based) of a scalar's value, when
// the scalar is a literal block (`|`), or one line written as its value (plain or quoted without
// escapes); nothing otherwise.
std::optional<YAML::Mark> scalar_position(const Field& f, const std::string& value, int line,
                                          int column);

// read_declarations.cpp: `dims` (name: free | reduced, at least one), `params` (name: number),
// and the tensors of one role (name: {dtype, shape}). Names are checked against the reserved
// names and against every name declared before (`declared`, with where).
std::vector<ix::DimDecl> read_dims(const Field& f, std::vector<Named>& declared);
std::vector<ix::ParamDecl> read_params(const std::optional<Field>& f, std::vector<Named>& declared);
std::vector<ix::TensorDecl> read_tensors(const Field& f, ix::Role role,
                                         const std::vector<ix::DimDecl>& dims,
                                         std::vector<Named>& declared);

// read_statements.cpp: the semantics parsed by kq::ix against the declarations; errors placed at
// the statement's line and column in the file. Every input must be read, every dim used in a
// shape (`declared` says where each was named).
ix::Program read_statements(const Field& f, const ix::Declarations& decls,
                            const std::vector<Named>& declared);

// read_formula.cpp: a formula over the program's dims and params, errors placed in the scalar.
Formula read_formula(const Field& f, const ix::Declarations& decls);

// read_shaped_compare.cpp: one rule per output: bitwise | {ulp: N} | {atol: F, rtol: F} |
// {bound: accumulation}.
std::vector<ShapedCompare> read_shaped_compare(const Field& f, const ix::Declarations& decls);

// read_points.cpp: `points: [{M: 1, N: 2}, ...]` or `grid: {M: [..], N: [..]}` from a map that
// holds one of them (`required`: one must be there). Every dim given, each a positive integer,
// every tensor's element count at most kMaxElements, every subscript of the program inside its
// tensor, no point twice.
std::vector<Point> read_points(const MapFields& m, const ix::Program& program, bool required);

// parse_shaped.cpp: a format-2 spec's sections, into spec.shaped and the format-1 parts it shares
// (op name, description, domain, layouts, qualification seed and bounds, timing policy, decision).
void parse_shaped(const Field& root, Spec& spec);

// read_timing.cpp, read_qualification.cpp: the policy keys shared by both formats.
void read_timing_policy(const MapFields& m, TimingPolicy& t);
void read_qualification_seed(const MapFields& m, QualificationExtras& q);    // seed
void read_qualification_bounds(const MapFields& m, QualificationExtras& q);  // the rest

}  // namespace kq::spec_detail
