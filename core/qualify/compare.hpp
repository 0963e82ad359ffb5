// Element comparison by the spec's rule.
//   bitwise:   bit patterns equal, so signed zeros and infinities count; NaN is compared as a
//              mask (any NaN matches any NaN: IEEE leaves payloads to the implementation)
//   ulp N:     same class (NaN with NaN, inf with the same inf), else at most N units in the
//              last place apart (-0 and +0 are 0 apart)
//   tolerance: |got - want| <= atol + rtol |want|; a NaN passes only where NaN is expected,
//              an infinity only where the same infinity is expected
//   bound:     format 2's {bound: accumulation}: |got - want| <= c u E + ulp(want), E the
//              reference's accumulation bound of the element (core/indexed/bound.hpp), u the
//              unit roundoff of the spec's compute type, ulp(want) one rounding into the output's
//              dtype at want; NaN and infinities as for a tolerance
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kq/tensor.hpp"
#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

// c of the accumulation bound: E is a first-order bound that takes a sum's rounding errors to
// grow like sqrt(K) (their typical growth, not the worst), so c = 2 leaves room for second-order
// terms and for a kernel's functions (exp, log) being off by an ulp, while a sum whose partial
// sums round to bfloat16 instead of float32 still fails (tests/unit/test_indexed_bound.cpp).
inline constexpr double kAccumulationBoundFactor = 2.0;

// How one output of a case is compared: by `rule`, or, where bound_scale > 0, by the bound
// (above) with bound_scale = c u, which needs the reference's bound of every element; at every
// element, or where `samples` is set at those alone.
struct OutputRule {
  OutputRule() = default;
  OutputRule(const CompareRule& r) : rule(r) {}  // NOLINT: format 1's one rule as it is
  CompareRule rule;
  double bound_scale = 0.0;
  // By the bound: how many ulps of the output's dtype are allowed beyond it (the output's own
  // rounding, and roundings of intermediates the spec admits: `{bound: accumulation, ulp: N}`).
  double bound_ulps = 1.0;
  // A case of small integers whose output is exact (qualify/exact_integers.hpp): `rule` is then
  // {ulp: 0}, the same value exactly (a zero of either sign: which sign a product or a max of
  // zeros gives may depend on the order).
  bool exact = false;
  // A case above the reference's cost budget (qualify/reference_samples.hpp): the logical
  // indices compared, ascending. The output's reference (and its bounds) then hold one element
  // per sample, in this order, instead of every element.
  std::shared_ptr<const std::vector<std::int64_t>> samples;
  bool by_bound() const { return bound_scale > 0.0; }
  bool sampled() const { return samples != nullptr; }
  // The elements the reference holds: the samples, or all `numel` of the output.
  std::int64_t compared(std::int64_t numel) const {
    return samples ? static_cast<std::int64_t>(samples->size()) : numel;
  }
};

// Whether `got` is acceptable for `want`; values are the dtype's bit patterns widened to u64.
bool element_matches(const CompareRule& rule, DType dtype, std::uint64_t want_bits,
                     std::uint64_t got_bits);
// The same under an output's rule; `bound` (the element's E) is read only by a bound rule. A NaN
// bound (a first-order analysis that broke down, 0 times an infinite error) bounds nothing.
bool element_matches(const OutputRule& rule, DType dtype, double bound, std::uint64_t want_bits,
                     std::uint64_t got_bits);
// One rounding into `dtype` at a value: the distance from its magnitude to the next value of the
// dtype away from zero (to the one below, at the largest finite). Value dtypes only.
double ulp_at(DType dtype, std::uint64_t bits);

// The value of a bit pattern of `dtype`, as a double.
double bits_to_double(DType dtype, std::uint64_t bits);
// "1.5 (0x3fc00000)"; integers as "7".
std::string describe_bits(DType dtype, std::uint64_t bits);
// "expected 1.5 (0x3fc00000), got 1.25 (0x3fa00000)", with a usual cause where the values
// name one: "(a subnormal result flushed to zero)", "(a zero of the other sign)".
std::string describe_mismatch(DType dtype, std::uint64_t want_bits, std::uint64_t got_bits);

// The rule for each output of case `c`: format 1's one rule; format 2's per output, its
// formulas evaluated at the case's dims (integer outputs bitwise), a bound's scale c u; {ulp: 0}
// where the case's small integers make the output exact; with the samples where the case is
// above the reference's cost budget.
std::vector<OutputRule> output_rules(const Spec& spec, const Case& c);
// Whether output k (in the order of the outputs) is compared by the accumulation bound, so that
// its reference comes with bounds (qualify/case_data.hpp).
bool output_by_bound(const Spec& spec, std::size_t k);
// output_rules' CompareRules, for checks that take no bounds. Throws std::runtime_error where an
// output is compared by the bound (those checks must take output_rules and the bounds).
std::vector<CompareRule> compare_rules(const Spec& spec, const Case& c);

}  // namespace kq
