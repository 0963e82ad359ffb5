// Comparing two runs: for each (arm, size, mode) timed in both, the ratio of medians B / A with a
// 95% bootstrap interval. Format-2 runs meet at the point ("M=32768,N=4096"), not at its number:
// two runs with different point lists compare on the points they share; format 1 at the size. Both
// runs are read by read_run() (record/run_data.hpp), as the summary is: rounds taken while
// throttled (by the run's usual SM clock) or unheld are left out of both.
//
// A change ("slower", "faster") must pass three tests: the interval excludes 1, the ratio is
// further than the threshold from 1, and further than the two runs' own run-to-run noise. The
// bootstrap interval treats every sample as independent; on a machine whose speed drifts (load
// beside it) it is far too narrow, and two runs of the same build differ by more than it says.
// So each run's noise is estimated from blocks of its rounds (block_noise in stats.hpp: the
// range of the medians of 4 to 8 contiguous blocks, over the median), and a change must exceed
// noise_a + noise_b. Why that combination: each run's median lies somewhere inside the range
// of its block medians, so unchanged code whose speed drifts only within runs gives medians up
// to half of each range apart, (noise_a + noise_b) / 2. The load beside a run also changes
// from one run to the next, which blocks of one run cannot see; the plain sum, twice that,
// leaves room for it. Measured: cpu_tbb run twice back to back beside a busy process on 2
// cores, 12 pairs of runs at 2 sizes, moved by up to 0.91 of sqrt(noise_a^2 + noise_b^2) (one
// bad draw from a false alarm) and up to 0.73 of the sum. A change the sum hides is one the
// runs cannot tell from their own drift: time more rounds, on a quieter machine. A run with too
// few rounds for blocks (under 8) takes the other run's noise: the same arm on the same machine
// (a stopping rule ends a run early when it looks steady, and under load that gave a false
// alarm). With neither estimated the threshold alone decides, and the table says so.
//
// Qualification verdicts are compared too: an arm whose verdict differs counts as a change.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kq {

struct TimingKey {
  std::string arm;
  // The run's own key: format 1 the element count; format 2 the point's number in run A (in run
  // B for a key timed in run B only).
  std::int64_t size = 0;
  std::string mode;
  std::string point;          // format 2: what the runs meet at; empty for format 1
  std::string where() const;  // the point, or the size
};

struct TimingChange {
  TimingKey key;
  std::int64_t size_b = 0;            // the key's size in run B (format 2: B's number)
  int n_a = 0, n_b = 0;               // samples in each run
  double median_a = 0, median_b = 0;  // seconds
  double ratio = 0, lo = 0, hi = 0;   // median B / median A and its 95% interval
  // Each run's run-to-run noise (block_noise; negative: too few rounds) and the two combined,
  // a + b, or twice the one estimated: a
  // fraction of the median; negative when either run has too few rounds for blocks.
  double noise_a = -1, noise_b = -1, noise = -1;
  // The copy timed in the same rounds (timing/light.hpp: the device copy beside CUDA arms, the
  // host copy beside CPU arms), B / A at this size: 0 when either run has none. A change that
  // the copy shows as much (B/A over the copy's B/A within the threshold or the noise, or the
  // copy moved the same way as far or further) is the machine's, not the arm's: "same", with
  // machine_moved set.
  double copy_ratio = 0;
  // The launch floor (an empty kernel timed as a single sample, beside CUDA arms) B minus A, in
  // seconds, for single launches of a CUDA arm; nullopt when either run has none. A change that
  // the floor's shift explains (B less the shift, over A, within the threshold or the noise) is
  // the machine's: "same", with floor_moved (and machine_moved) set.
  std::optional<double> floor_shift_s;
  bool floor_moved = false;
  bool machine_moved = false;
  std::string verdict;  // "faster", "slower", "same", "too few samples"
};

struct VerdictChange {
  std::string arm, a, b;  // the arm's qualification verdict in run A and in run B
};

// What the comparison's header says of a run.
struct RunDescription {
  std::string dir, op, started, host, gpu, spec_sha256;
  std::map<std::string, std::string> settings;  // MachineFacts::environment
};

struct RunComparison {
  double threshold = 0.02;
  RunDescription run_a, run_b;
  std::vector<TimingChange> timing;       // (arm, size, mode) timed in both runs, sorted
  std::vector<TimingKey> only_a, only_b;  // timed in one run only
  std::vector<VerdictChange> verdicts_changed;
  std::vector<std::string> qualified_only_a, qualified_only_b;  // arms with a verdict in one run
  std::map<std::string, int> left_out_a, left_out_b;  // rounds left out of each run, by reason
  int faster = 0, slower = 0, same = 0, too_few = 0;
  int without_noise = 0;  // compared on the threshold alone: too few rounds for a noise estimate
  int machine_moved = 0;  // changes the copy or the launch floor explains: counted same
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
