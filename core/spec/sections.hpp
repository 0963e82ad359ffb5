// The readers of each part of a spec, one file each; parse_spec.cpp puts them together.
// Internal to the spec loader.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kq/op_spec.hpp"
#include "spec/spec.hpp"
#include "spec/yaml_field.hpp"

namespace kq::spec_detail {

// names.cpp: [A-Za-z_][A-Za-z0-9_]*, and the names the semantics language keeps for itself.
bool is_identifier(std::string_view s);
bool is_reserved_name(std::string_view s);
// A string that is an identifier; `what` names it in messages ("op name").
std::string read_identifier(const Field& f, std::string_view what);

// read_io.cpp: `inputs` (a non-empty list of names) and `outputs` (exactly one, by name or as
// {name, ownership, may_alias}). `input_fields` receives where each input was named.
std::vector<std::string> read_inputs(const Field& f, std::vector<Field>& input_fields);
std::vector<OutputSpec> read_outputs(const Field& f, const std::vector<std::string>& inputs);

// read_semantics.cpp: the expression, parsed against the inputs; every input must be used.
Expr read_semantics(const Field& f, const std::vector<std::string>& inputs,
                    const std::vector<Field>& input_fields);

// read_layouts.cpp: the layout contract; absent fields keep LayoutContract's defaults, except
// min_alignment_bytes, which defaults to the dtype's size.
LayoutContract read_layouts(const std::optional<Field>& f, DType dtype);

// read_compare.cpp: bitwise | {ulp: N} | {atol: A, rtol: R}.
CompareRule read_compare(const Field& f);

// read_qualification.cpp, read_timing.cpp, read_decision.cpp.
QualificationExtras read_qualification(const std::optional<Field>& f);
TimingPolicy read_timing(const Field& f);
DecisionRule read_decision(const Field& f);

// limits.cpp: the numeric checks shared by the sections above.
double read_positive(const Field& f);      // finite and > 0
double read_non_negative(const Field& f);  // finite and >= 0
std::int64_t read_positive_int(const Field& f);
// An element count: a positive integer up to kMaxElements, so that byte counts (times the dtype
// size, times the buffers of a case) stay far inside int64.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
std::int64_t read_element_count(const Field& f);

}  // namespace kq::spec_detail
