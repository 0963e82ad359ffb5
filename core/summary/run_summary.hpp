// summary.json's schema: a run condensed once (summary/summarize.hpp), declared here with its
// fields listed once (run_summary.cpp), as record/records.hpp declares the records. Every report
// prints a RunSummary (report/printer.hpp); `kq report`, the selftest and anything else that
// reads summary.json reads it into one (read_summary).
//
// Keys are those summary.json has had since kSummaryVersion 1: a run written before reads the
// same. Facts recorded by others (the machine, kq's build, a CUPTI profile, the plugins'
// environment) keep their JSON whole, beside the fields the reports use.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "decision/decision.hpp"
#include "record/records.hpp"

namespace kq {

// summary.json's "schema_version" is the records' (rec::kSchemaVersion); the summary's own keys
// have not changed since it was first written.
inline constexpr int kSummaryVersion = 1;

// A known-broken candidate's verdict against the check it declares.
enum class Caught {
  not_broken,  // a good arm: no "caught" key
  not_judged,  // skipped, unsupported or not run: "caught": null
  yes,         // rejected by the declared check
  no,          // qualified, or failed another check
};

struct ArtifactFiles {
  std::vector<std::string> files;  // under artifacts/<arm>/
  std::string sass;                // the SASS file, when disassembled
  bool operator==(const ArtifactFiles&) const = default;
};

// One arm's row: who it is and its final verdict (a timing check's rejection included).
struct ArmRow {
  std::string name, family, device, expected_rejection;
  rec::Verdict verdict = rec::Verdict::not_run;
  std::optional<std::string> check, case_name, detail;
  std::optional<rec::CaseCounts> counts;
  std::vector<rec::SanitizerFinding> sanitizer;
  std::optional<ArtifactFiles> artifacts;
  std::optional<std::string> choice;  // what it chose per size (cuDNN: shaping, engine)
  bool rejected_while_timed = false;
  Caught caught = Caught::not_broken;
  bool operator==(const ArmRow&) const = default;
};

// Arms that declined the spec, or were skipped here, grouped by their reason.
struct ReasonGroup {
  std::string reason;
  std::vector<std::string> arms;
  bool operator==(const ReasonGroup&) const = default;
};

// The counts the first line of every report gives; cases of known-broken arms are left out.
struct Headline {
  int in_contract_cases_passed = 0, in_contract_cases = 0, in_contract_cases_skipped = 0;
  int out_of_contract_refused = 0, out_of_contract_cases = 0;
  int broken_rejected = 0, broken_total = 0, good_qualified = 0, good_total = 0;
  bool operator==(const Headline&) const = default;
};

struct LoadErrorRow {  // a plugin or a file of arms that did not load
  std::string file, message;
  bool operator==(const LoadErrorRow&) const = default;
};

// What the reports show of the machine (manifest.json's "machine", kept whole in `raw`).
struct GpuFacts {
  std::string name;
  int sms = 0;
  double l2_bytes = 0;
};
struct MachineFacts {
  nlohmann::json raw = nlohmann::json::object();
  std::string hostname, cpu, cuda_unusable;
  int cores = 0;
  int cuda_driver = 0, cuda_runtime = 0;  // CUDA's own encoding: 13000 for 13.0; 0 where none
  std::vector<GpuFacts> gpus;
  // kq run --devices: the GPUs qualification was spread over and the one that timed ("GPU 1
  // (NVIDIA H200)"); absent in runs before it.
  std::vector<std::string> devices;
  std::string timing_gpu;
  // The settings the run found in its environment (device/settings_environment.hpp); empty in
  // runs before them.
  std::map<std::string, std::string> environment;
  bool operator==(const MachineFacts& o) const { return raw == o.raw; }
};

// The settings whose value differs between any two of `runs` (set in one and unset in another
// included), by name: for kq compare and kq merge. Where compiled code is cached (*_CACHE_DIR) is
// not compared: it differs from node to node (kq's cache is under $HOME) and changes no result.
using Settings = std::map<std::string, std::string>;
std::vector<std::string> differing_settings(const std::vector<const Settings*>& runs);
// `name`'s value in `run`, nullopt where it is unset.
std::optional<std::string> setting_of(const Settings& run, const std::string& name);

struct KqBuild {  // manifest.json's "kq", kept whole in `raw`
  nlohmann::json raw = nlohmann::json::object();
  std::string version, commit;
  bool dirty = false;
  bool operator==(const KqBuild& o) const { return raw == o.raw; }
};

// What one call launched, from one extra call under CUPTI (the profile record's body, whole in
// `raw`).
struct FirstKernel {
  std::string name;
  int grid = 0, block = 0, registers = 0;  // grid and block: x
  double occupancy = 0;                    // a fraction
};
struct KernelProfile {
  nlohmann::json raw = nlohmann::json::object();
  std::optional<std::string> unavailable;  // why there is none
  int kernels = 0, memcpys = 0, memsets = 0;
  double kernel_seconds = 0;
  std::optional<FirstKernel> first;
  bool operator==(const KernelProfile& o) const { return raw == o.raw; }
};

struct FlagNote {  // a plausibility flag (decision/plausibility.hpp) in an arm's cell
  std::string kind, message;
  bool operator==(const FlagNote&) const = default;
};
struct FlagRow {  // the same, in the run's list of flags
  std::string arm;
  std::int64_t size = 0;
  std::string kind, message;
  bool operator==(const FlagRow&) const = default;
};

// One arm at one size: its statistics over the counted samples, bandwidth, speed-ups and checks.
struct TimingCell {
  std::string arm;
  int n = 0;
  double median_s = 0, min_s = 0, q1_s = 0, q3_s = 0, rel_noise = 0;
  std::optional<double> gbps, pct_light;  // bandwidth, and as % of the device copy
  std::optional<double> tflops;           // format 2: the statements' FLOPs per second
  std::optional<double> pct_compute;      // tflops as % of the compute light (the vendor GEMM)
  std::optional<double> graph_median_s, host_median_s;
  std::optional<int> throttled, unheld;  // samples left out, by reason
  std::optional<KernelProfile> profile;
  std::optional<Speedup> eager_speedup, speedup;  // the eager arm's, the baseline's median over its
  std::optional<bool> recheck_ok;                 // the timing loop's output checks
  std::optional<std::string> recheck_message;
  std::optional<int> checked;
  std::optional<int> graph_kernel_nodes;
  std::vector<FlagNote> flags;
  bool operator==(const TimingCell&) const = default;
};

// One timed size.
struct TimingRow {
  std::int64_t size = 0;             // format 1: elements; format 2: the timing point's number
  std::optional<std::string> point;  // format 2: "M=32768,N=4096"
  double bytes = 0;                  // moved by one call
  std::optional<double> flops;       // format 2: one call's
  std::optional<int> rounds;
  std::string stopped_by;
  std::optional<double> light_gbps, floor_s, host_light_gbps;
  // A product's point: the vendor GEMM timed in the same rounds (timing/compute_light.hpp),
  // what it computed, and the roofline's pick: "compute" where the point's FLOPs per byte
  // exceed the GPU's ridge (the compute light's rate over the copy's, FLOP/byte), else "memory".
  std::optional<double> compute_light_tflops, ridge;
  std::optional<std::string> compute_light_what, bound;
  std::optional<std::string> cupti_attached;  // a smaller size's profile left CUPTI attached
  std::vector<TimingCell> arms;
  std::vector<std::string> notes;  // what the reports say under the size's heading
  bool operator==(const TimingRow&) const = default;
};

struct LightRow {  // the device copy at one size
  std::int64_t size = 0;
  int n = 0;
  double gbps = 0, best_gbps = 0;
  bool operator==(const LightRow&) const = default;
};
struct LightSummary {
  bool measured = false;
  std::vector<LightRow> per_size;
  bool operator==(const LightSummary&) const = default;
};

// How much slower a reference (the baseline, the eager arm) or a control (the device copy, the
// launch floor) ran in an isolated timing worker than in the clean one at one size: the
// isolated worker's median time over the clean worker's, with its 95% bootstrap interval.
struct WorkerSlowdown {
  std::int64_t size = 0;
  std::string what;  // "torch_compile", "the device copy", "the launch floor"
  double ratio = 0, lo = 0, hi = 0;
  bool operator==(const WorkerSlowdown&) const = default;
};

// An isolated timing worker (record/records.hpp WorkerStart) and what it measured against the
// clean worker. A disturbed one's arms are never adopted.
struct WorkerRow {
  std::string label, file, reason;
  std::vector<std::string> arms;
  std::vector<WorkerSlowdown> slowdowns;  // every comparison made, by size
  bool disturbed = false;
  std::optional<std::string> why;  // a disturbed or stopped worker: in one sentence
  bool operator==(const WorkerRow&) const = default;
};

// Qualification's cases that ran on one of several GPUs (kq run --devices).
struct GpuLoad {
  int gpu = 0;  // its number in --devices' numbering
  int cases = 0;
  double seconds = 0;  // the cases' own seconds, summed
  bool operator==(const GpuLoad&) const = default;
};

struct RunSummary {
  int schema_version = rec::kSchemaVersion;
  std::string run_dir, op;
  std::optional<std::string> dtype, compute;  // absent in runs before issue 13
  std::string spec_sha256, started;
  MachineFacts machine;
  KqBuild kq;
  std::vector<std::string> problems;  // lines of the run that could not be read
  std::vector<LoadErrorRow> load_errors;
  std::vector<GpuLoad> gpu_loads;  // by GPU number, where cases name their GPU
  nlohmann::json plugin_environment = nlohmann::json::object();  // {plugin: {key: value}}

  std::vector<ArmRow> arms;  // in the manifest's order
  std::vector<ReasonGroup> declined, skipped;
  Headline headline;

  std::optional<std::string> timing_stopped;
  double sm_clock_mhz_median = 0;
  std::vector<TimingRow> timing;
  LightSummary light;
  std::vector<rec::ArmSkip> timing_skips;
  std::vector<FlagRow> flags;
  std::vector<rec::ArmNote> timing_notes;
  bool timing_ran = false;
  std::vector<WorkerRow> workers;  // the isolated timing workers, in the order they ran
  Decision decision;

  const ArmRow* arm(const std::string& name) const;  // nullptr when not listed
  // Where a record's `size` was timed: format 2 its point ("M=32768,N=4096"), else "4096
  // elements".
  std::string where(std::int64_t size) const;
  bool operator==(const RunSummary&) const = default;
};

// clang-format off
#define KQ_SUMMARY_TYPES(X)  \
  X(ArtifactFiles)           \
  X(ArmRow)                  \
  X(ReasonGroup)             \
  X(Headline)                \
  X(LoadErrorRow)            \
  X(MachineFacts)            \
  X(KqBuild)                 \
  X(KernelProfile)           \
  X(FlagNote)                \
  X(FlagRow)                 \
  X(TimingCell)              \
  X(TimingRow)               \
  X(LightRow)                \
  X(LightSummary)            \
  X(WorkerSlowdown)          \
  X(WorkerRow)               \
  X(GpuLoad)                 \
  X(RunSummary)
// clang-format on

#define KQ_SUMMARY_JSON(T)                     \
  void to_json(nlohmann::json& j, const T& r); \
  void from_json(const nlohmann::json& j, T& r);
KQ_SUMMARY_TYPES(KQ_SUMMARY_JSON)
#undef KQ_SUMMARY_JSON

// summary.json of a run directory; throws std::runtime_error naming the file when it cannot be
// read or parsed.
RunSummary read_summary(const std::filesystem::path& file);

}  // namespace kq
