// The decision: which arm to adopt for which sizes against the spec's baseline, with what
// confidence. A win counts only when the whole 95% bootstrap interval of the speed-up (the
// baseline's median over the arm's) is above 1 and the point estimate reaches min_speedup.
// With an eager arm, the decision also states the winner's speed-up against it (or, when none
// wins, the best candidate's), beside the one against the baseline: a win over eager execution
// alone may disappear against the compiled baseline.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

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

  // The arm's device ("" when unknown); "arm#2" is arm's second instance, on arm's device.
  std::string device_of(const std::string& arm) const;
  // Whether the arm can be weighed against the baseline: the same device, or either unknown.
  bool comparable(const std::string& arm, const std::string& baseline) const;
};

// samples[size][arm] = seconds. Returns
//   {"baseline", "min_speedup", "baseline_ran", "per_size":[{size, winner, speedup, lo, hi}],
//    "ranges":[{arm, from, to, min_speedup, max_speedup, host_bound:[{size, host_s, gpu_s}]}],
//    "other_device":[{arm, device}], "not_adopted":[{arm, why}], "sentence"}
// and, with context.eager set: "eager" (its name), "eager_ran"; each per_size winner's
// eager_speedup, eager_lo, eager_hi and each range's min_eager_speedup, max_eager_speedup (where
// the eager arm was timed); with no range, "best_candidate": {arm, min_speedup, max_speedup,
// min_eager_speedup, max_eager_speedup}, the candidate whose speed-ups against the baseline have
// the highest geometric mean over the sizes (absent when there is none).
nlohmann::json decide(
    const std::map<std::int64_t, std::map<std::string, std::vector<double>>>& samples,
    const std::string& baseline, double min_speedup, const ArmContext& context = {});

// The arm a timed instance belongs to: "arm#2" (a second instance, kq run --twice) -> "arm".
std::string instance_arm(const std::string& name);

}  // namespace kq
