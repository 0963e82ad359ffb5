// The reference of a matrix product (kq/matmul_form.hpp's match_product: sum(k, A B) inside any
// elementwise epilogue over the output's indices: a bias, gelu, a triangle's select) without
// the tree walk: the statement machine reads every term through its subscripts one node at a time,
// about 60 ns a term, so a 1024^3 product took a minute on two cores. Here the inputs are read
// once into float64 rows and each output row runs its K terms over all its columns at once, in
// the machine's order (k ascending, in its chunks, the same compensated sums and bound rules), and
// each sum is finished by the machine itself (Machine::eval_given: the epilogue's walk with the
// sum given), so the values and bounds are the machine's bit for bit: evaluate_at, which samples
// through the machine, agrees with it.
#pragma once
#include <vector>

#include "indexed/instance.hpp"

namespace kq::ix {

// Whether statement `statement` of the instance's program is a product this path computes (the
// program's only statement: one product as match_product takes it, around it only numbers,
// params, dims, the statement's indices, inputs subscripted by them and operations). If so, fills
// `out` (the output's elements, row-major, unrounded) and, when `bounds` is not null, each
// element's bound.
bool run_contraction(const Instance& in, int statement, Values& out, Values* bounds);

}  // namespace kq::ix
