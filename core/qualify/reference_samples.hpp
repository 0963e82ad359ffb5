// Above a cost budget, a format-2 case's outputs are checked against the float64 reference at
// sampled coordinates only: the full evaluation of a point with a tensor above 2^31 elements
// keeps every temporary and output in float64 (tens of GiB) and takes minutes, while the
// elements a kernel gets wrong there sit at predictable places. The samples of an output:
//   - every corner (each dim at its first or last index);
//   - along each dim, the edges (0, 1, last - 1, last) and the indices around the multiples of
//     32, 128, 1024 and 4096 (the first two multiples, the middle one and the last two), the
//     other dims at their first, at their last and at a random index;
//   - where a tensor of the case (input or output) holds more than 2^31 - 1 elements, the
//     elements at and around offsets 2^31 and 2^32 in it (where 32-bit offsets wrap), the first
//     and last element of the row holding each and of the next row, carried over to every
//     output through the dims they share;
//   - random elements from the case's seed, until kReferenceSamples are drawn.
// An output of at most kReferenceSamples elements is taken whole. The sampled reference is
// ix::evaluate_at's (with the accumulation bounds where the output is compared by them): the
// same values, bit for bit, as the full evaluation at those coordinates.
#pragma once
#include <cstdint>
#include <vector>

#include "kq/indexed.hpp"
#include "plan/case.hpp"
#include "spec/spec.hpp"

namespace kq {

// The budget, in estimated float64 operations of the full reference (reference_work): about
// 4.3e9, a few seconds on 16 cores and a few GiB of float64 temporaries. Softmax and the norms at
// 32768x4096 (1e9 to 2e9) stay whole; a point with a tensor above 2^31 elements that computes
// anything per element is above it. KQ_REFERENCE_WORK_BUDGET overrides it (tests use a small
// one to reach the sampled path on small shapes).
inline constexpr double kReferenceWorkBudget = 4294967296.0;  // 2^32
// How many elements of an output are compared when it is sampled (the structured ones first,
// then random ones up to this count).
inline constexpr std::int64_t kReferenceSamples = 4096;

// The budget in force: KQ_REFERENCE_WORK_BUDGET when set to a whole number, else
// kReferenceWorkBudget.
double reference_work_budget();

// The full reference's estimated work at dim values `dims` (in the program's dim order): per
// element of each statement's left-hand side, one for the element and its FLOPs as
// ix::default_cost counts them (a reduction over R elements, R times its body).
double reference_work(const ix::Program& p, const std::vector<std::int64_t>& dims);

// Whether case c of a format-2 spec is checked at samples (its reference_work above the budget).
// Format 1: never.
bool reference_sampled(const Spec& spec, const Case& c);

// The logical (row-major) indices at which each output of case c is compared, ascending, one
// list per output in the order of the outputs; deterministic in the spec and the case (its
// seed). Whatever reference_sampled says.
std::vector<std::vector<std::int64_t>> reference_samples(const Spec& spec, const Case& c);

}  // namespace kq
