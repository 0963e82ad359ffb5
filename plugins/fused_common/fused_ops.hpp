// The three elementwise operations the hand-written CUDA arms implement, and how a spec is
// recognised as one of them: dtype f32, or f16 / bf16 computed in float32 (load half, compute in
// float, round once: elem.cuh), the expected inputs, and the semantics expression matched node
// by node (kq/expr_match.hpp). Host-only; the device formulas are in fused_math.cuh.
#pragma once
#include <optional>
#include <string>

#include "kq/expr_match.hpp"
#include "kq/op_spec.hpp"
#include "kq/status.hpp"

namespace kq::fused {

enum class FusedOp { residual_relu, silu_mul, leaky_relu };

inline const char* to_string(FusedOp op) {
  switch (op) {
    case FusedOp::residual_relu:
      return "residual_relu";
    case FusedOp::silu_mul:
      return "silu_mul";
    case FusedOp::leaky_relu:
      return "leaky_relu";
  }
  return "?";
}

inline int input_count(FusedOp op) { return op == FusedOp::leaky_relu ? 1 : 2; }

// The semantics each op must have, inputs by position.
inline Pattern pattern(FusedOp op) {
  switch (op) {
    case FusedOp::residual_relu:  // relu(x + residual)
      return node(Op::relu, {node(Op::add, {in(0), in(1)})});
    case FusedOp::silu_mul:  // silu(x) * y
      return node(Op::mul, {node(Op::silu, {in(0)}), in(1)});
    case FusedOp::leaky_relu:  // select(x > 0, x, 0.01 * x)
      return node(Op::select,
                  {node(Op::gt, {in(0), cst(0.0)}), in(0), node(Op::mul, {cst(0.01), in(0)})});
  }
  return {};
}

inline const char* formula(FusedOp op) {
  switch (op) {
    case FusedOp::residual_relu:
      return "relu(x + residual)";
    case FusedOp::silu_mul:
      return "silu(x) * y";
    case FusedOp::leaky_relu:
      return "select(x > 0, x, 0.01 * x)";
  }
  return "?";
}

// Whether these arms compute the spec's dtype as its contract says: f32 in float32; f16 and bf16
// loaded, computed in float32 and rounded once (compute f32). Otherwise `why` says what not.
inline bool dtype_supported(const OpSpec& spec, std::string& why) {
  if (spec.dtype == DType::f32) return true;
  if (!is_half(spec.dtype)) {
    why = "dtype " + std::string(kq::to_string(spec.dtype)) + ": this arm takes f32, f16 and bf16";
    return false;
  }
  if (spec.compute != DType::f32) {
    why = "dtype " + std::string(kq::to_string(spec.dtype)) + " computed in " +
          std::string(kq::to_string(spec.compute)) + ": this arm computes half in float32 only";
    return false;
  }
  return true;
}

// Which of `ops` the spec is (a dtype_supported dtype, one output, the input count, the exact
// expression); on failure `why` says what did not fit. Domain: every formula here propagates NaN
// and inf as the float64 reference does (and the round-to-nearest conversions to half keep NaN
// and overflow to inf), so finite and ieee are both accepted.
template <class Ops>
std::optional<FusedOp> recognise(const OpSpec& spec, const Ops& ops, std::string& why) {
  if (!dtype_supported(spec, why)) return std::nullopt;
  if (spec.outputs.size() != 1) {
    why = "expects exactly one output";
    return std::nullopt;
  }
  for (FusedOp op : ops) {
    if (static_cast<int>(spec.inputs.size()) != input_count(op)) continue;
    if (matches(spec.semantics, pattern(op))) return op;
  }
  why = "semantics '" + spec.semantics.text + "' is not one this arm implements (";
  bool first = true;
  for (FusedOp op : ops) {
    why += (first ? "" : ", ") + std::string(formula(op));
    first = false;
  }
  why += ", inputs by position)";
  return std::nullopt;
}

}  // namespace kq::fused
