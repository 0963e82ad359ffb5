// The decision: which arm to adopt for which sizes against the spec's baseline, with what
// confidence. A win counts only when the whole 95% bootstrap interval of the speed-up (the
// baseline's median over the arm's) is above 1 and the point estimate reaches min_speedup.
// With an eager arm, the decision also states the winner's speed-up against it (or, when none
// wins, the best candidate's), beside the one against the baseline: a win over eager execution
// alone may disappear against the compiled baseline.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "decision/decision.hpp"
#include "record/instance_name.hpp"

namespace kq {

// samples[size][arm] = seconds of the counted samples.
using TimedSamples = std::map<std::int64_t, std::map<std::string, std::vector<double>>>;

// What the decision knows of the arms besides their samples.
struct ArmContext {
  // arm -> "cpu" | "cuda"; an arm missing here counts as on the baseline's device. Only arms on
  // the baseline's device are candidates: a CPU arm works on host memory and a CUDA arm on
  // device memory, so their times answer different questions.
  std::map<std::string, std::string> devices;
  // size -> arm -> median host enqueue of one call (seconds). Where a winner's enqueue outlasts
  // its GPU time, calls launched one at a time are paced by the host: the decision says so.
  std::map<std::int64_t, std::map<std::string, double>> host_median_s;
  // arm -> why it is never adopted: rejected by the timing checks, or flagged as physically
  // implausible (decision/plausibility.hpp). The decision names them and why.
  std::map<std::string, std::string> not_adopted;
  // The eager arm ("" for none): speed-ups against it (its median over the arm's, with the same
  // bootstrap interval) are stated beside those against the baseline. It never changes who wins.
  std::string eager;
  // arm -> the label of the isolated timing worker it was timed in (record/run_data.hpp); an arm
  // missing here was timed in the clean worker. An isolated arm's speed-ups are against the
  // references timed in its own worker ("torch_compile@label"): speed-ups come from within a
  // worker, as matched as in the clean one.
  std::map<std::string, std::string> worker_of;

  // The instance of `reference` (the baseline or the eager arm) that `arm` is weighed against:
  // the one timed in arm's worker.
  std::string in_worker(const std::string& reference, const std::string& arm) const;
  // The arm's device ("" when unknown); "arm#2" is arm's second instance, on arm's device.
  std::string device_of(const std::string& arm) const;
  // Whether the arm can be weighed against the baseline: the same device, or either unknown.
  bool comparable(const std::string& arm, const std::string& baseline) const;
};

// The decision at every timed size, its ranges, the best candidate when none wins, and the arms
// passed over. The sentence and the choices are left empty: decision_sentence() writes the one,
// choose_arm() makes the others.
Decision decide(const TimedSamples& samples, const std::string& baseline, double min_speedup,
                const ArmContext& context = {});

// The first arm of `list` for which why_not() gives "", and why_not() of each one before it:
// the baseline (or eager arm) a run uses.
ArmChoice choose_arm(const std::vector<std::string>& list,
                     const std::function<std::string(const std::string&)>& why_not);

}  // namespace kq
