// Fresh inputs for every timed call. Before each sample, outside the timed region, the set about
// to be timed gets back the input elements changed the time before and has a few others changed
// (kChanges an input for format 1; format 2 up to kChanges in all, fewer where evaluating what
// they change would cost more than kEvaluationSteps): each takes the value of another element of
// the same
// input, so it stays inside the values the case draws. Positions come from the run's secret
// seed. No timed call then sees contents an earlier one saw, and a result cache keyed on the
// pointers or on sampled contents returns stale elements where the inputs changed; a cache keyed
// on all the contents reads every input, the work of a call of an elementwise operation.
//
// A checked sample is compared with the reference of what it was given: the size's reference
// with the elements that can change evaluated again (format 1: the changed positions; format 2:
// the region ix::affected_regions gives, by ix::evaluate_at; where that would take more than
// kCheckSteps, a random part of it, the others accepted as they are), a patch the caller
// puts on its reference for the comparison and takes off after.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "indexed/affected.hpp"
#include "indexed/evaluate.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "spec/spec.hpp"

namespace kq {

class FreshInputs {
 public:
  static constexpr int kChanges = 4;
  // What one check's evaluation may cost, in element steps: an output element costs its fan-in
  // (the largest input's elements over the output's, or the longest reduction's terms where
  // more) times the longest scan. Format 2 adds changes while they keep to it; a change whose
  // region holds an element costing more (a scalar loss over a large input) is not made, and that
  // set's inputs stay.
  static constexpr double kEvaluationSteps = 16777216.0;
  // What a checked sample's evaluation costs at most, in element steps (or one element's, where
  // that is more): past it a random part of the changed region is evaluated. At about 100 ns a
  // step, 16M steps made every checked sample of a decode-shaped product cost seconds.
  static constexpr double kCheckSteps = 1048576.0;

  // For the timed point `c` of `spec`, whose outputs are compared by `rules`, from the run's
  // secret `seed`. Changes nothing where an output aliases an input.
  FreshInputs(const Spec& spec, const Case& c, const std::vector<OutputRule>& rules,
              std::uint64_t seed);

  // Puts back set t's last change and makes a new one: on the host, or uploaded to t's device
  // on `stream` and waited for.
  void change(CaseTensors& t, void* stream);

  // What t's reference differs by, now: per output, the positions in its reference (the logical
  // index, or the sample's position where the output is sampled), and their values (the output's
  // dtype) and bounds (where compared by the bound).
  // `unknown`: positions whose reference changed but was not evaluated again (above
  // kCheckSteps a random part of the region is), to be accepted as they are.
  struct Patch {
    std::vector<std::size_t> at;
    HostBytes values;
    std::vector<double> bounds;
    std::vector<std::size_t> unknown;
  };
  std::vector<Patch> patches(const CaseTensors& t);

 private:
  struct Element {
    int input = 0;
    std::int64_t index = 0;   // logical
    std::int64_t offset = 0;  // in elements, from the view's data
    std::uint64_t now = 0;    // the bytes it holds while changed
  };
  std::vector<Element> draw(const CaseTensors& t);
  void write(CaseTensors& t, const std::vector<Element>& elements, bool changed, void* stream);
  std::vector<Patch> format1_patches(const CaseTensors& t, const std::vector<Element>& changed);
  std::vector<Patch> format2_patches(const CaseTensors& t, const std::vector<Element>& changed);
  std::uint64_t pristine(const CaseTensors& t, int input, std::int64_t offset) const;
  // Format 2: what evaluating `regions` (by tensor position) costs, in element steps (infinite
  // where it holds an element costing more than kEvaluationSteps).
  double evaluation_steps(const std::vector<std::vector<ix::Box>>& regions) const;

  const Spec& spec_;
  const Case& case_;
  const std::vector<OutputRule>& rules_;
  bool enabled_ = true;
  std::mt19937_64 rng_;
  std::map<const CaseTensors*, std::vector<Element>> changed_;  // by set: its current change
  ix::Tensors dense_;  // format 2: the inputs, dense, unchanged (made on the first patch)
  ix::DimValues dims_;
  std::vector<int> inputs_;           // format 2: the input tensors' positions in the declarations
  std::vector<double> element_cost_;  // format 2, by tensor position: an output element's steps
};

}  // namespace kq
