// The float64 reference: the definition of what every arm must compute.
//
// Each function is defined on doubles (kq/semantics.hpp gives the definitions):
//   relu(x) = x > 0 ? x : +0, NaN stays NaN (so relu(-0) = +0)
//   max/min propagate NaN; max(-0, +0) = +0, min(-0, +0) = -0
//   gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), evaluated as 0.5 x erfc(-x / sqrt 2); silu(x) = x
//   sigmoid(x); sigmoid(x) = 1 / (1 + exp(-x)) comparisons give 1 or 0 and are false on NaN (ne is
//   true); select(c, a, b) = c != 0 ? a : b clamp(x, lo, hi) = min(max(x, lo), hi)
// The reference reads inputs in their dtype, computes in float64, and rounds once to the
// output's dtype.
#pragma once
#include <span>

#include "kq/expr.hpp"
#include "kq/tensor.hpp"

namespace kq {

// One element: `inputs[i]` is the value of input i. For speed nothing is checked: `e` must be
// well-formed (as parse_expr makes it) and `inputs` must cover every input index it reads. An
// empty expression gives NaN. Allocates nothing for expressions of up to 64 nodes. This is
// kq::ref::eval_expr (kq/expr_eval.hpp), which the arms fold constants and spot-check with.
double eval_scalar(const Expr& e, std::span<const double> inputs);

// Every element of `out` (host memory; any strides, rank up to kMaxRank) from `inputs` of the
// same shape (host memory; any strides, 0 for broadcast), in parallel with TBB.
// `inputs` holds exactly as many views as the expression's largest input index + 1. Throws
// std::invalid_argument, before writing anything, for a malformed expression, a wrong input
// count, a shape mismatch, a device other than cpu, a missing data pointer, a rank outside
// 0..kMaxRank, or an output with stride 0 over more than one element. Overlap between the output
// and an input is not checked: an exact alias (in place) works; any other overlap is undefined.
void eval_reference(const Expr& e, std::span<const TensorView> inputs, const TensorView& out);

}  // namespace kq
