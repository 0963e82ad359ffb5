// Input values for a case: counter-based (each element a hash of seed, input and position), so
// generation is parallel and reproducible, and a case can be regenerated from its name alone.
#pragma once
#include <cstdint>

#include "kq/tensor.hpp"
#include "plan/case.hpp"

namespace kq {

// Fills `count` elements of `dtype` at `dst` with the values of input `input` of case `c`,
// for storage positions [0, count). `generation` > 0 draws a different set (new values under
// the same pointers).
void fill_input_values(const Case& c, int input, DType dtype, void* dst, std::int64_t count,
                       std::uint64_t generation = 0);

}  // namespace kq
