// The float64 reference of a format-2 case: the inputs (host views, any strides) copied dense
// into the evaluator's buffers, the program evaluated (core/indexed), each output's bytes
// written dense in logical order, or at its samples alone.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "indexed/buffer.hpp"
#include "kq/indexed.hpp"
#include "kq/tensor.hpp"

namespace kq {

// Where view v's element at logical (row-major) index `logical` lies, in elements from its data.
std::int64_t element_offset(const TensorView& v, std::int64_t logical);

// A host view's elements (any strides), dense in logical order.
ix::Buffer dense_copy(const TensorView& v);

// `inputs` in the program's input order, dst[k] the k-th output's destination; where bounds[k]
// is set (bounds may be empty), the k-th output's accumulation bounds too (doubles, dense in
// logical order; ix::evaluate_with_bounds). With `samples` (one list of logical indices per
// output, qualify/reference_samples.hpp), only those elements are evaluated (ix::evaluate_at,
// bit for bit the same values and bounds) and dst[k] and bounds[k] hold one element per sample,
// in the list's order. Throws ix::EvalError (a gather out of range, say) and std::exception.
void shaped_reference(const ix::Program& p, const std::vector<std::int64_t>& dims,
                      std::span<const TensorView> inputs, std::span<unsigned char* const> dst,
                      std::span<double* const> bounds = {},
                      const std::vector<std::vector<std::int64_t>>* samples = nullptr);

}  // namespace kq
