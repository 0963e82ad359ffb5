// What an arm is told about the operation: the contract part of a spec, as plain data.
// The host fills it from the YAML spec; arms read it in supports() and prepare().
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kq/expr.hpp"
#include "kq/indexed.hpp"
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
  // Format 1: the dtype of every tensor. Format 2: that of the first output (each tensor's own
  // is in program->decls).
  DType dtype = DType::f32;
  // The precision the contract computes in: load each input, evaluate the expression in
  // `compute`, round once to `dtype`. The dtype itself for f32 and f64; f32 by default for f16
  // and bf16 (spec field `compute`). The reference is always float64 rounded once to `dtype`;
  // `compare` says how far an output computed in `compute` may be from it.
  DType compute = DType::f32;
  // Format 2, compute: tf32: compute is f32, and a product may round its operands to TF32
  // (tensor cores' f32 mode); the compare admits it. An arm may still compute in full f32.
  bool tf32 = false;
  std::vector<std::string> inputs;
  std::vector<OutputSpec> outputs;
  Expr semantics;  // format 1: one expression; it defines outputs[0]
  // Format 2 (shaped operations, `kq_spec: 2`): the declarations (dims, params, tensors with
  // their own dtypes and shapes) and the indexed statements; `inputs` and `outputs` name the
  // tensors in the same order. Null for format 1. kq/shaped_contract.hpp checks views against it.
  std::shared_ptr<const ix::Program> program;
  Domain domain = Domain::finite;
  LayoutContract layouts;
  CompareRule compare;
};

}  // namespace kq
