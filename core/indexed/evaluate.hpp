// The float64 reference of an indexed program: the definition of what every arm must compute.
//
// Statements run in order. Every element is computed in float64 from its inputs read exactly;
// temporaries and outputs are kept unrounded in float64 while later statements read them, and
// each output is rounded once, to nearest even, into its dtype at the end. Sums and cumsums are
// compensated (accumulate.hpp); max and min propagate NaN; argmax and argmin give the first index
// of the extreme, a NaN counting as the extreme (the first NaN wins). Each statement runs in
// parallel over its left-hand side's indices (over all but the scanned one for a scan), and each
// element is computed by one thread in a fixed order, so the results are the same bit for bit
// whatever the number of threads.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "indexed/buffer.hpp"
#include "kq/indexed.hpp"

namespace kq::ix {

using DimValues = std::map<std::string, std::int64_t, std::less<>>;
using Tensors = std::map<std::string, Buffer, std::less<>>;

// A problem met while evaluating: a missing or mis-shaped input, a subscript or gather out of
// range, an empty argmax, an integer output given a value it cannot hold. The message names
// the statement and the coordinate.
struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every output, by name, for these dim values and inputs (one Buffer per input, by name, of the
// declared dtype and shape). Throws EvalError.
Tensors evaluate(const Program& p, const DimValues& dims, const Tensors& inputs);

// evaluate()'s outputs and, for the outputs asked, each element's accumulation bound E
// (bound.hpp; docs/indexed-statements.md, "The accumulation bound"): a first-order bound, in
// units of the compute type's u, on the error of computing the element's value by the statements
// in that type. Computed in the same walk as the values (plain float64 sums for E), so every
// element costs about twice what evaluate()'s does, and only where some output is asked.
struct Evaluation {
  Tensors outputs;  // as evaluate()
  Tensors bounds;   // by output name, for the outputs asked: f64, the output's shape
};
// Outputs computed into the caller's memory, by name: each dense and row-major in its dtype,
// every element written (evaluate_with_bounds' output Buffer is then place()d there).
using Places = std::map<std::string, void*, std::less<>>;
// `bounded`: outputs by their position in p.decls.tensors. `places`: outputs written into the
// caller's memory; `bound_places`: bounds likewise (f64, of the outputs in `bounded`). Throws
// EvalError (for a position that is no output, too); the memory of the places may then hold
// part of the results.
Evaluation evaluate_with_bounds(const Program& p, const DimValues& dims, const Tensors& inputs,
                                std::span<const int> bounded, const Places& places = {},
                                const Places& bound_places = {});
// evaluate_with_bounds' bounds alone.
Tensors evaluate_bounds(const Program& p, const DimValues& dims, const Tensors& inputs,
                        std::span<const int> outputs);

// One element of an output.
struct Sample {
  std::string output;
  std::vector<std::int64_t> coord;
};

// Assigned tensors that some element reads whole (a loss's sum over every row's log-sum-exp, a
// weight every element reads) are computed whole by evaluate_at, in parallel, before the
// samples, where they have at most this many elements: their float64 values take at most 128 MiB
// each (twice that with bounds), and the samples that read them then cost what the sampled rows
// do, not a serial walk over the whole input.
inline constexpr std::int64_t kEagerElements = std::int64_t{1} << 24;

// The value each sample has in evaluate()'s outputs (rounded to the output's dtype, returned as
// a double), computing only what those elements need: the elements of temporaries they read,
// and for a scan the run up to the element. Tensors read whole of at most `eager_elements`
// elements are computed whole first, as evaluate() does (0: none, every element on demand).
// Agrees exactly with evaluate() at those coordinates.
std::vector<double> evaluate_at(const Program& p, const DimValues& dims, const Tensors& inputs,
                                std::span<const Sample> samples,
                                std::int64_t eager_elements = kEagerElements);
// evaluate_at's values and each sample's accumulation bound, exactly as evaluate_with_bounds
// gives them at those coordinates (the same walk, on the same values): what a sampled check of an
// output compared by the bound reads (qualify/reference_samples.hpp).
struct SampledEvaluation {
  std::vector<double> values;  // as evaluate_at
  std::vector<double> bounds;  // by sample
};
SampledEvaluation evaluate_at_with_bounds(const Program& p, const DimValues& dims,
                                          const Tensors& inputs, std::span<const Sample> samples,
                                          std::int64_t eager_elements = kEagerElements);

}  // namespace kq::ix
