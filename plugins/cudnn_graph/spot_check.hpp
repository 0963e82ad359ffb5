// The quick check of a few output elements of every candidate plan during the search, against
// the reference's own evaluation of the expression (kq::ref::eval_expr, kq/expr_eval.hpp). The
// real qualification is the host's; this only catches a plan that computes garbage, and it is
// never stricter than the spec's own compare rule.
#pragma once
#include "kq/op_spec.hpp"
#include "kq/tensor.hpp"

namespace kq::cudnn_graph {

// Whether `got` (what the plan wrote) is close enough to `want` (the reference's value rounded
// to the dtype t, f32 or half) for the search's sanity check; `scale` is the largest magnitude
// among the element's inputs. Whatever `rule` (the spec's compare rule) accepts passes too.
bool close_enough(float got, float want, double scale, DType t = DType::f32,
                  const CompareRule& rule = {});

}  // namespace kq::cudnn_graph
