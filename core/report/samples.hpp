// The samples that count: which round records of rounds.jsonl the statistics keep. The summary
// (summary.cpp, and through it report.md and report.html) and `kq compare` (compare.cpp) both
// select their samples here, so that they count the same rounds.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace kq {

// (arm, size, mode) of a round record; mode defaults to "single".
using SampleKey = std::tuple<std::string, std::int64_t, std::string>;

struct KeptSamples {
  std::vector<double> seconds;          // the kept rounds' times, in the order they were recorded
  std::vector<double> host_seconds;     // of the kept rounds that carry one, in the same order
  std::map<std::string, int> left_out;  // rounds left out, by reason (see left_out_because)
};

struct RunSamples {
  double usual_clock_mhz = 0;  // the median sm_clock_mhz of the run's records (0: none carry one)
  std::map<SampleKey, KeptSamples> by_key;
};

// The median SM clock of every record that carries sm_clock_mhz: the run's usual clock.
double usual_sm_clock(const std::vector<nlohmann::json>& records);

// Why a round or light record of rounds.jsonl is left out of the statistics, or "" when it is
// kept: "throttled" (its SM clock was below 75% of the run's usual clock, usual_clock_mhz) or
// "unheld" (its blocking kernel timed out, so the GPU may have waited for the host's enqueue).
std::string left_out_because(const nlohmann::json& record, double usual_clock_mhz);

// Every round record of rounds.jsonl, kept or counted as left out, per (arm, size, mode). An
// (arm, size, mode) whose rounds were all left out is present with no seconds.
RunSamples select_samples(const std::vector<nlohmann::json>& records);

}  // namespace kq
