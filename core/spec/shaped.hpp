// The format-2 part of a spec (`kq_spec: 2`): an operation over named dims, with tensors of their
// own shapes, indexed statements as semantics (kq::ix), a compare rule per output and points
// (dim values) to qualify and time at. Loaded and validated, not yet run: Spec::shaped holds it.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kq/indexed.hpp"
#include "kq/tensor.hpp"
#include "spec/formula.hpp"

namespace kq {

// One value per dim, in the order of ShapedContract::program->decls.dims.
struct Point {
  std::vector<std::int64_t> dims;
  friend bool operator==(const Point&, const Point&) = default;
};

// How one output is held against the float64 reference rounded to its dtype. Integer and bool
// outputs compare bitwise.
struct ShapedCompare {
  enum class Kind : std::uint8_t { bitwise, ulp, tolerance, accumulation_bound };
  int output = -1;  // its tensor in program->decls.tensors
  Kind kind = Kind::bitwise;
  std::int64_t max_ulp = 0;     // ulp; accumulation_bound: the ulps allowed beyond the bound
  std::optional<Formula> atol;  // tolerance: at least one of the two; an absent one is 0
  std::optional<Formula> rtol;
};

struct CostOverrides {
  std::optional<Formula> bytes;  // absent: kq::ix::default_cost's
  std::optional<Formula> flops;
};

struct ShapedContract {
  // The declarations (dims with kinds, params with values, tensors with roles, dtypes and shapes
  // in the order inputs, outputs, temporaries) and the parsed statements.
  // Shared with Spec::op.program, which arms see.
  std::shared_ptr<const ix::Program> program;
  DType compute = DType::f32;  // what u is the unit roundoff of
  // compute: tf32: f32 whose products may round their operands to TF32 (10 mantissa bits), as
  // tensor cores do; u is then TF32's, 2^-11. An f32 product admitted, a bf16 one refused.
  bool tf32 = false;
  std::vector<ShapedCompare> compare;  // one per output, in the order of the outputs
  CostOverrides cost;
  std::vector<Point> qualification_points;  // extra points; may be empty
  std::vector<Point> timing_points;         // at least one
  int version_line = 1;                     // where `kq_spec: 2` is, for the refusal to run it
  int version_column = 1;
};

// 2^-24 for f32, 2^-53 for f64, 2^-11 for f16, 2^-8 for bf16.
double unit_roundoff(DType compute);

// The u of the contract's formulas and bounds: the compute type's, TF32's under compute: tf32.
double contract_roundoff(const ShapedContract& c);

// A formula of the contract evaluated at a point (the params' values and the compute type's u).
double evaluate(const Formula& f, const ShapedContract& c, const Point& p);

}  // namespace kq
