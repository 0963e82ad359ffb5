// The decision: which arm to adopt for which sizes against the spec's baseline, with what
// confidence. A win counts only when the whole 95% bootstrap interval of the speed-up (the
// baseline's median over the arm's) is above 1 and the point estimate reaches min_speedup.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

struct SpeedupEstimate {
  double ratio = 0, lo = 0, hi = 0;  // baseline median / arm median, and its 95% interval
};

// Bootstrap (percentile) interval of median(base) / median(arm); deterministic.
SpeedupEstimate bootstrap_speedup(const std::vector<double>& base, const std::vector<double>& arm,
                                  int resamples = 2000, std::uint64_t seed = 1);

// samples[size][arm] = seconds; devices[arm] = "cpu" | "cuda" (arms missing from it count as on
// the baseline's device). Only arms on the baseline's device are candidates: a CPU arm works on
// host memory and a CUDA arm on device memory, so their times answer different questions.
// Returns
//   {"baseline", "min_speedup", "baseline_ran", "per_size":[{size, winner, speedup, lo, hi}],
//    "ranges":[{arm, from, to, min_speedup, max_speedup}],
//    "other_device":[{arm, device}], "sentence"}
nlohmann::json decide(
    const std::map<std::int64_t, std::map<std::string, std::vector<double>>>& samples,
    const std::string& baseline, double min_speedup,
    const std::map<std::string, std::string>& devices = {});

// The arm a timed instance belongs to: "arm#2" (a second instance, kq run --twice) -> "arm".
std::string instance_arm(const std::string& name);

}  // namespace kq
