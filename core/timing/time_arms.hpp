// The timing stage, in the worker that runs it: every qualified arm at every timing size,
// interleaved in a freshly shuffled order each round, each sample a single call (or a graph
// replay) preceded by the spec's L2 policy. Every sample is emitted as it is taken.
//
// What is timed is what was qualified: each sample runs on an output poisoned after the set's
// previous sample; a random subset of samples (timing/output_checks.hpp) and a closing round
// are compared against the reference; a graph is replayed once on a poisoned output and
// compared before it is timed; after the rounds, one call is profiled under CUPTI and must keep
// to its stream (device/stream_discipline.hpp). Every sample starts with no persisting L2 line,
// and after every call the device's settings and the stream's attributes must be as kq left
// them (device/device_state.hpp). A failed check rejects the arm for the rest of the run.
//
// Records (record/records.hpp), per size: size_start, arm_skip and arm_note (an arm set up
// differently or not at all), graph, the samples (round; the controls light and floor, in the
// same shuffled rounds: timing/light.hpp), timing_reject (a failed check: timing_output,
// graph_output, wrong_stream or device_state), size_end, recheck, profile and
// profiler_attached.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kq/arm.hpp"
#include "qualify/qualify_arm.hpp"
#include "record/records.hpp"
#include "spec/spec.hpp"

namespace kq {

struct TimedArm {
  IKernelArm* arm = nullptr;
  ArmIdentity identity;
};

// A candidate slower than kContender times the baseline at the size before is set up after the
// eager arm: past that it is not expected to win at the next size, while the eager arm gives
// every other arm's speed-up over eager there.
constexpr double kContender = 1.25;

// The order a size's arms are set up in (indices into `arms`): where a large size's buffers
// fill the device, the arms set up last are the ones left out at it. The baseline first (the
// first of the rule's baselines among the arms, its instances "arm#2" and "arm@label" too: no
// decision stands without it), then the other arms, the rule's later baselines among them (the
// decision weighs every size against one baseline): the contenders timed at the size before
// fastest first (`last_medians`: arm -> its median seconds a call there), the arms not timed
// there in their order, the eager arms, and last the candidates slower than kContender times
// the baseline there, fastest first: the arms left out are the slowest. The rounds interleave
// them in `arms`' order all the same.
std::vector<std::size_t> setup_order(const std::vector<TimedArm>& arms, const DecisionRule& rule,
                                     const std::map<std::string, double>& last_medians = {});

// Where the baseline at order[from - 1] could not be set up and no other is: the next of the
// rule's baselines in order[from...] moves to `from`, ahead of the candidates.
void next_baseline_first(std::vector<std::size_t>& order, std::size_t from,
                         const std::vector<TimedArm>& arms, const DecisionRule& rule);

// The arm's place in the rule's baselines (its instances' too); rule.baselines.size() for none.
std::size_t baseline_rank(const TimedArm& a, const DecisionRule& rule);

// cpu_beside_cuda false (kq run --quick): where a CUDA arm is timed, no CPU arm is. A CPU arm is
// never a candidate beside CUDA ones, and its set-up (a CPU torch.compile build: 40 s on the
// H200's host) can take longer than all the rounds of a first look.
// `rejected`: arms rejected before the first size (arm -> why), never set up.
void time_arms(const std::vector<TimedArm>& arms, const Spec& spec, const Emit& emit,
               bool cpu_beside_cuda = true, std::map<std::string, std::string> rejected = {});

}  // namespace kq
