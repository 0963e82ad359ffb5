// What an arm is told about the operation: the contract part of a spec, as plain data.
// The host fills it from the YAML spec; arms read it in supports() and prepare().
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kq/expr.hpp"
#include "kq/tensor.hpp"

namespace kq {

// finite: inputs are finite; ieee: NaN and infinities propagate as the expression says.
enum class Domain : std::uint8_t { finite, ieee };

struct OutputSpec {
  std::string name;
  // Inputs this output may share memory with (in-place); empty means out-of-place only.
  std::vector<std::string> may_alias;
};

struct LayoutContract {
  bool contiguous_only = true;           // strided, transposed or broadcast views are outside it
  std::int64_t min_alignment_bytes = 4;  // data pointers the caller may pass are aligned to this
  std::vector<int> ranks{1};             // tensor ranks inside the contract
};

// How an output is compared with the float64 reference rounded to the dtype.
struct CompareRule {
  enum class Kind { bitwise, ulp, tolerance };
  Kind kind = Kind::bitwise;
  std::int64_t max_ulp = 0;  // ulp
  double atol = 0.0;         // tolerance: |got - want| <= atol + rtol * |want|; NaN never passes
  double rtol = 0.0;
};

struct OpSpec {
  std::string op;
  std::string description;
  DType dtype = DType::f32;
  // The precision the contract computes in: load each input, evaluate the expression in
  // `compute`, round once to `dtype`. The dtype itself for f32 and f64; f32 by default for f16
  // and bf16 (spec field `compute`). The reference is always float64 rounded once to `dtype`;
  // `compare` says how far an output computed in `compute` may be from it.
  DType compute = DType::f32;
  std::vector<std::string> inputs;
  std::vector<OutputSpec> outputs;
  Expr semantics;  // one expression; it defines outputs[0]
  Domain domain = Domain::finite;
  LayoutContract layouts;
  CompareRule compare;
};

}  // namespace kq
