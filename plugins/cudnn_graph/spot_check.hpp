// A small host evaluator of the semantics expression in double precision with kq's definitions
// (relu(-0) = +0, NaN propagates through relu/max/min, comparisons false on NaN except ne...).
// Two uses: folding constant sub-expressions before the graph is built, and the quick check of a
// few output elements of every candidate plan during the search. The real qualification is the
// host's; this only catches a plan that computes garbage.
#pragma once
#include <span>

#include "kq/expr.hpp"

namespace kq::cudnn_graph {

// One operation on already evaluated operands (unused operands are ignored).
double eval_op(Op op, double a, double b, double c);

// The whole expression for one element; `inputs[k]` is the value of spec input k.
double eval_expr(const Expr& e, std::span<const double> inputs);

// Whether `got` (what the plan wrote) is close enough to `want` (eval_expr rounded to float) for
// the search's sanity check; `scale` is the largest magnitude among the element's inputs.
bool close_enough(float got, float want, double scale);

}  // namespace kq::cudnn_graph
