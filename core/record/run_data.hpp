// A run directory, read once into typed records (record/records.hpp), with the rules for which
// samples count applied here and nowhere else. The summary, every report and `kq compare` read
// a run through read_run(), so that they all count the same samples.
//
// The sample rules: a round or light sample is left out of the statistics (kept in rounds.jsonl
// and rounds.csv, counted, and named in the reports) when
//   - throttled: its SM clock was below 75% of the run's usual clock, the median sm_clock_mhz
//     of every sample that carries one;
//   - unheld: its blocking kernel timed out, so the GPU may have waited for the host's enqueue.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "record/records.hpp"

namespace kq {

// An arm as manifest.json lists it.
struct ManifestArm {
  std::string name, family, device, expected_rejection;
  std::vector<std::string> sources;  // "PATH SHA256" of each source file its identity names
};

// What the reports need of manifest.json; `raw` is all of it.
struct Manifest {
  int schema_version = 1;  // absent in runs written before record/records.hpp: 1
  std::string op, spec_sha256, started;
  nlohmann::json machine = nlohmann::json::object(), kq = nlohmann::json::object();
  std::vector<std::string> baselines;  // in order of preference (spec.baselines, or [baseline])
  std::vector<std::string> eager;      // the same (spec.eager; [] in runs without it)
  double min_speedup = 1.03;
  double bytes_per_element = 0;
  std::vector<ManifestArm> arms;
  nlohmann::json load_errors = nlohmann::json::array();  // [{file, message}]: what did not load
  // {plugin file name: {key: value}}: what each plugin reported of its environment (its
  // kq_plugin_environment export: Python, torch, Triton versions); {} in runs without it.
  nlohmann::json plugin_environment = nlohmann::json::object();
  nlohmann::json raw = nlohmann::json::object();
  const ManifestArm* arm(const std::string& name) const;  // nullptr when not listed
};

enum class LeftOut { counted, throttled, unheld };
const char* to_string(LeftOut why);  // "", "throttled", "unheld"

// (arm, size, mode) of a round sample.
using SampleKey = std::tuple<std::string, std::int64_t, std::string>;

struct KeptSamples {
  std::vector<double> seconds;          // the counted samples' times, in recorded order
  std::vector<double> host_seconds;     // of the counted samples that carry one, in order
  std::map<std::string, int> left_out;  // samples left out, by reason (to_string(LeftOut))
};

// The speed of light at one size: the device copy timed among the arms.
struct Light {
  int n = 0;                    // copies counted at this size
  double gbps = 0;              // their median bandwidth, GB/s (1e9 bytes per second)
  double best_gbps = 0;         // the fastest copy
  std::vector<double> samples;  // each counted copy's GB/s, in recorded order
  double seconds = 0;           // their median time
};

// The compute light at one size: the vendor GEMM timed among the arms.
struct ComputeLight {
  int n = 0;               // products counted at this size
  double tflops = 0;       // their median rate, TFLOP/s (1e12 FLOPs per second)
  double best_tflops = 0;  // the fastest product
  std::string what;        // "bf16 4096^3 (f32 accumulation)"
};

// An isolated timing worker (rec::WorkerStart): the records that belong to it alone, the
// controls and its sizes' starts and ends. Its arms' records (rounds, rechecks, rejections...)
// are in RunData's lists with every other worker's: arm names are unique across workers.
struct WorkerTiming {
  rec::WorkerStart start;
  std::vector<rec::SizeStart> size_starts;
  std::vector<rec::SizeEnd> size_ends;
  std::vector<rec::LightSample> light_samples;
  std::vector<rec::FloorSample> floor_samples;
  std::optional<rec::TimingStopped> stopped;
  // The sample rules applied, as RunData's own.
  std::map<std::int64_t, Light> light;
  std::map<std::int64_t, std::vector<double>> floor_samples_s;
};

struct RunData {
  std::filesystem::path dir;
  Manifest manifest;

  // qualification.jsonl, records of compute-sanitizer passes ("pass") left out
  std::vector<rec::CaseResult> cases;
  std::vector<rec::VerdictRecord> verdicts;  // in order; an arm's last one is final
  std::vector<rec::SanitizerFinding> sanitizer;

  // rounds.jsonl
  bool timing_ran = false;  // it holds any record
  std::vector<rec::SizeStart> size_starts;
  std::vector<rec::SizeEnd> size_ends;
  std::vector<rec::ArmSkip> skips;
  std::vector<rec::ArmNote> notes;
  std::vector<rec::GraphInfo> graphs;
  std::vector<rec::RoundSample> rounds;
  std::vector<rec::LightSample> light_samples;
  std::vector<rec::FloorSample> floor_samples;
  std::vector<rec::TimingReject> rejects;
  std::vector<rec::Recheck> rechecks;
  std::vector<rec::Profile> profiles;
  std::vector<rec::ProfilerAttached> attached;
  std::vector<rec::Disturbed> disturbed;
  std::optional<rec::TimingStopped> stopped;
  // The isolated timing workers, in the order they ran, and the label of each arm timed in one
  // (its own arms and its references' instances). The fields above are the clean worker's.
  std::vector<WorkerTiming> isolated;
  std::map<std::string, std::string> worker_of;

  // The sample rules, applied once.
  double usual_clock_mhz = 0;           // 0: no sample carries a clock
  std::vector<LeftOut> round_left_out;  // one per rounds[i]
  std::vector<LeftOut> light_left_out;  // one per light_samples[i]
  std::vector<LeftOut> floor_left_out;  // one per floor_samples[i]
  // Every (arm, size, mode) with a round sample; one whose samples were all left out is present
  // with no seconds.
  std::map<SampleKey, KeptSamples> samples;
  std::map<std::int64_t, Light> light;                 // the device copy: sizes with one counted
  std::map<std::int64_t, Light> host_light;            // the host copy (beside CPU arms): the same
  std::map<std::int64_t, ComputeLight> compute_light;  // the vendor GEMM: the same
  std::map<std::int64_t, std::vector<double>>
      floor_samples_s;  // the launch floor's counted samples, in order

  // Lines that could not be read: "rounds.jsonl line 12: <why>" (a torn last line is not one).
  std::vector<std::string> problems;

  // The arm's final verdict record, or nullptr.
  const rec::VerdictRecord* verdict_of(const std::string& arm) const;
};

// Reads manifest.json, qualification.jsonl and rounds.jsonl of `dir`; missing files read as
// empty (a run killed early). Records of unknown types are ignored.
RunData read_run(const std::filesystem::path& dir);

}  // namespace kq
