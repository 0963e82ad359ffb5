// The default cost of a program at given dim values, which gives GB/s, TFLOP/s and the % of the
// light. Bytes: every input and output read or written once, at its dtype's size (temporaries
// are the arm's business and cost nothing). FLOPs, counted from the statements per element of
// each left-hand side: each arithmetic operator, comparison and function is one; a reduction over
// R elements costs R times (its body + 1); a scan costs its body + 1 per element, as a running
// scan does; numbers, params, dims, indices, tensor reads and index arithmetic in subscripts
// (gathers included) cost nothing.
#pragma once
#include "indexed/evaluate.hpp"

namespace kq::ix {

struct Cost {
  double bytes = 0.0;
  double flops = 0.0;
};

// Throws EvalError for a dim without a value.
Cost default_cost(const Program& p, const DimValues& dims);

}  // namespace kq::ix
