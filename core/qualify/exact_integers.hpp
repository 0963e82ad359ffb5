// Which outputs a case of small integers (ValueClass::integers) compares exactly. With every
// input an integer of small magnitude, a program of sums, maxima, minima and elementwise
// integer arithmetic computes only integers; where every one of them, partial sums of any order
// included, is below 2^p of the compute type (and the output below 2^p of its dtype), each is
// exact in any order of evaluation, and a right arm gives the reference's value exactly. The
// rule is conservative, read from the program (the statements feeding the output, through the
// temporaries and outputs they read):
//   - allowed: numbers and params that are integers, dims and indices as values, reads of inputs
//     (float inputs hold [-kIntegerClassMax, kIntegerClassMax], integer ones [-8, 8] or a
//     gather's extent, bools 0 or 1; a padded input its pad too, which must be an integer), neg,
//     abs, relu, add, sub, mul, max, min, comparisons, select, clamp, sum / max / min / argmax /
//     argmin reductions and cumsum;
//   - anything else (div, exp, log, sqrt, tanh, sigmoid, erf, gelu, silu, prod, cumprod, a
//     number like 0.5) makes the output, and what reads it, inexact;
//   - magnitudes: |a + b| <= |a| + |b|, |a * b| <= |a| |b|, a sum or cumsum of K terms K times its
//     term's, each bounded by 2^p of the compute type (u = 2^-p), the output by its dtype's.
#pragma once
#include <cstdint>
#include <vector>

#include "kq/indexed.hpp"

namespace kq {

// Whether output `tensor` (its position in p.decls.tensors) is exact under the integer value
// class at dim values `dims`, computed in `compute`. Integer and bool outputs are exact anyway
// (they compare bitwise); this says so for value outputs.
bool exact_integer_output(const ix::Program& p, int tensor, const std::vector<std::int64_t>& dims,
                          DType compute);

}  // namespace kq
