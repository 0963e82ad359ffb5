// kq's own kernels for judging on the device what an arm wrote there, so that a large output
// is checked where it lies and only a count and the first index cross the bus. Each mirrors a
// host function that stays the reference implementation: element_matches (qualify/compare.hpp)
// and CaseTensors' byte and element scans. tests/gpu/test_device_checks.cpp holds each pair to
// the same answers. None of these kernels is an arm's: no plugin code runs in them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kq/op_spec.hpp"
#include "kq/tensor.hpp"

namespace kq::devcheck {

struct Scan {
  std::uint64_t count = 0;  // elements (or bytes) that failed
  std::int64_t first = -1;  // the lowest index among them, -1 when none
};

// Elements [0, n) of `got` against `want`, both dense arrays of `dtype` on the device, by the
// spec's rule: element_matches for every element.
Scan compare_elements(const void* got, const void* want, std::int64_t n, DType dtype,
                      const CompareRule& rule, void* stream);

// The accumulation bound's rule (qualify/compare.hpp's OutputRule): |got - want| may reach
// scale * E + ulps * ulp(want), E the element's bound.
struct BoundRule {
  double scale = 0;
  double ulps = 1;
};

// Elements [0, n) of `got` against `want` by the bound, `bound` holding each element's E (doubles,
// on the device): element_matches of an OutputRule compared by the bound, for every element.
Scan compare_bounded(const void* got, const void* want, const double* bound, std::int64_t n,
                     DType dtype, const BoundRule& rule, void* stream);

// Elements [0, n) whose bits differ between `a` and `b`, a NaN matching any NaN
// (CaseTensors::first_difference).
Scan differing_elements(const void* a, const void* b, std::int64_t n, DType dtype, void* stream);

// Bytes [0, n) that differ between `a` and `b`.
Scan differing_bytes(const void* a, const void* b, std::size_t n, void* stream);

}  // namespace kq::devcheck
