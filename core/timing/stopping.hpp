// The stopping rule of a timed size: at least min_rounds, then stop as soon as the decision is
// sharp enough: the 95% bootstrap interval of every arm's median speed-up over the baseline
// is narrower than the spec's threshold (min_speedup - 1). Without the baseline in the run,
// each arm's own median interval must be that narrow (relative to its median). Otherwise stop
// at max_rounds or max_seconds.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "spec/spec.hpp"

namespace kq {

// kq run --quick, a first look: at most 50 rounds and 5 s a size, 20 ms of warm-up (and on a
// GPU host the CUDA arms only: time_arms). The decision's intervals are as honest as ever, only
// wider: fewer wins are called.
void quick_timing(TimingPolicy& t);

// "" to go on; else "confidence", "max_rounds" or "max_seconds".
std::string stop_reason(const std::map<std::string, std::vector<double>>& samples, const Spec& spec,
                        int rounds, double elapsed_s);

}  // namespace kq
