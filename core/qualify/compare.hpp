// Element comparison by the spec's rule.
//   bitwise:   bit patterns equal, so signed zeros and infinities count; NaN is compared as a
//              mask (any NaN matches any NaN: IEEE leaves payloads to the implementation)
//   ulp N:     same class (NaN with NaN, inf with the same inf), else at most N units in the
//              last place apart (-0 and +0 are 0 apart)
//   tolerance: |got - want| <= atol + rtol |want|; a NaN passes only where NaN is expected,
//              an infinity only where the same infinity is expected
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kq/tensor.hpp"
#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

// Whether `got` is acceptable for `want`; values are the dtype's bit patterns widened to u64.
bool element_matches(const CompareRule& rule, DType dtype, std::uint64_t want_bits,
                     std::uint64_t got_bits);

// The value of a bit pattern of `dtype`, as a double.
double bits_to_double(DType dtype, std::uint64_t bits);
// "1.5 (0x3fc00000)"; integers as "7".
std::string describe_bits(DType dtype, std::uint64_t bits);

// The rule for each output of case `c`: format 1's one rule; format 2's per output, its
// formulas evaluated at the case's dims (integer outputs bitwise). Throws std::runtime_error for
// a rule kq cannot apply yet (bound: accumulation).
std::vector<CompareRule> compare_rules(const Spec& spec, const Case& c);

}  // namespace kq
