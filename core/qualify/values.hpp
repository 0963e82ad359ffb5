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
// The splitmix64 finaliser: the hash every counter-based value stream is made of.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void fill_input_values(const Case& c, int input, DType dtype, void* dst, std::int64_t count,
                       std::uint64_t generation = 0);

}  // namespace kq
