// Comparing two runs: for each (arm, size, mode) timed in both, the ratio of medians B / A with a
// 95% bootstrap interval; a change is flagged when the interval excludes 1 and the ratio is
// further than the threshold from 1. Rounds taken while the GPU was throttled are left out, as
// in the summary. Qualification verdicts are compared too: an arm whose verdict differs counts
// as a change.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

struct TimingKey {
  std::string arm;
  std::int64_t size = 0;
  std::string mode;
};

struct TimingChange {
  TimingKey key;
  int n_a = 0, n_b = 0;               // samples in each run
  double median_a = 0, median_b = 0;  // seconds
  double ratio = 0, lo = 0, hi = 0;   // median B / median A and its 95% interval
  std::string verdict;                // "faster", "slower", "same", "too few samples"
};

struct VerdictChange {
  std::string arm, a, b;  // the arm's qualification verdict in run A and in run B
};

struct RunComparison {
  double threshold = 0.02;
  nlohmann::json run_a, run_b;            // {dir, op, started, machine, spec_sha256} of each run
  std::vector<TimingChange> timing;       // (arm, size, mode) timed in both runs, sorted
  std::vector<TimingKey> only_a, only_b;  // timed in one run only
  std::vector<VerdictChange> verdicts_changed;
  std::vector<std::string> qualified_only_a, qualified_only_b;  // arms with a verdict in one run
  int faster = 0, slower = 0, same = 0, too_few = 0;
  // Something changed beyond noise: a timing got faster or slower, or a verdict changed.
  bool changed() const { return faster + slower > 0 || !verdicts_changed.empty(); }
};

// A ratio needs this many samples on each side; fewer gives "too few samples" (no change).
inline constexpr int kMinCompareSamples = 5;

// Reads both run directories (manifest.json, qualification.jsonl, rounds.jsonl; each optional).
RunComparison compare_runs(const std::filesystem::path& run_a, const std::filesystem::path& run_b,
                           double threshold = 0.02);

// The table, the lists and a summary line, as `kq compare` prints them.
std::string render_comparison(const RunComparison& c);

}  // namespace kq
