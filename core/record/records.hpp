// The schema of a run directory's records: every record a stage writes to qualification.jsonl
// or rounds.jsonl, or a worker sends its parent, is one of these structs. Each has its JSON
// form (to_json/from_json, "type" naming the struct's kType); writers emit the structs and the
// reader (record/run_data.hpp) loads them back. Optional fields are written only when present,
// as std::optional here. manifest.json carries kSchemaVersion; a run written before it did
// reads as version 1, whose records are the same.
//
// qualification.jsonl, per arm (a record of a compute-sanitizer pass carries "pass": the tool;
// every record as the stage writes it, "at_s": its seconds since the stage began):
//   case_start, waiting,  progress only (a case began; it waits for its turn at the big cases
//   prepared              or for a large case's data; the arm's prepare() returned)
//   case                  one case's result
//   sanitizer             what one compute-sanitizer tool found
//   verdict               the arm's verdict (the last one without "pass" is final)
// rounds.jsonl, per timing size, in order:
//   size_start, arm_skip, arm_note, graph, then light, floor and round samples, timing_reject when
//   a check fails, size_end, recheck, profile, profiler_attached; timing_stopped when the timing
//   worker died. The worker ends with done (never written to a file).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kq::rec {

using nlohmann::json;

// 3: format-2 (shaped) runs: "size" in rounds.jsonl numbers a timing point (1, 2, ... in the
// spec's order) and size_start names it ("point", with the call's "bytes" and "flops").
// 2: manifest.json carries "schema_version". 1: a run written before (same records).
inline constexpr int kSchemaVersion = 3;

// An arm's qualification verdict. not_run: no verdict was recorded (the run stopped first).
enum class Verdict { qualified, rejected, crashed, hung, unsupported, skipped, not_run };
std::string_view to_string(Verdict v);
Verdict parse_verdict(std::string_view s);  // throws std::invalid_argument on an unknown word
// Rejected, crashed or hung: the arm failed a check.
bool failed(Verdict v);
// Skipped, unsupported or not run: the arm was never judged.
bool not_judged(Verdict v);
// A verdict's JSON is its word; an unknown word reads as not_run.
void to_json(json& j, const Verdict& v);
void from_json(const json& j, Verdict& v);

// ---- qualification.jsonl ----

struct CaseStart {
  static constexpr std::string_view kType = "case_start";
  std::string arm, case_name;
  double budget_s = 0;  // the parent's hang timeout for this case
  std::optional<std::string> pass;
  // The hang timeout until the arm's prepare() returns (a prepared record), where prepare() may
  // compile (a JIT, torch.compile, Triton); budget_s from then on.
  std::optional<double> prepare_budget_s;
};

struct Prepared {
  static constexpr std::string_view kType = "prepared";
  std::string arm, case_name;
  double seconds = 0;  // how long prepare() took
};

// A worker that cannot start a case yet: its inputs and references are still being computed
// beside the workers, or (turn) a large case waits for another's to leave the device.
struct Waiting {
  static constexpr std::string_view kType = "waiting";
  std::string arm, case_name;
  std::optional<std::string> pass;
  bool turn = false;
};

// Seconds one case (or, summed, one arm's cases) spent in each stage of qualification:
// drawing inputs, the float64 reference, copies to the device (inputs, poison), the arm's
// prepare() and run() calls with their synchronisation, copies back, and the checks
// (comparison, guard zones, inputs read back).
struct CaseStages {
  double generate = 0, reference = 0, upload = 0, run = 0, download = 0, compare = 0;
  CaseStages& operator+=(const CaseStages& s) {
    generate += s.generate;
    reference += s.reference;
    upload += s.upload;
    run += s.run;
    download += s.download;
    compare += s.compare;
    return *this;
  }
};

struct CaseResult {
  static constexpr std::string_view kType = "case";
  std::string arm, case_name, group;
  bool in_contract = true;
  std::string result;  // passed, refused, failed, skipped
  double seconds = 0;
  std::optional<std::string> outside_because;  // out-of-contract cases: why
  std::optional<std::string> check, message;   // the check that failed it, and what it saw
  // Value checks: the first bad element (logical index), how many, "value (bits)" of each.
  std::optional<std::int64_t> index, bad_count;
  std::optional<std::string> expected, got;
  std::optional<std::string> pass;
  std::optional<CaseStages> stages;  // where its seconds went (runs before issue 14: absent)
  // Where its outputs were checked: "host" (downloaded) or "device" (kq's kernels, for large
  // outputs of CUDA arms). Absent in runs before the device checks.
  std::optional<std::string> checked_on;
  // Format 2, a case above the reference's cost budget (qualify/reference_samples.hpp): its
  // outputs were compared with the reference at this many sampled elements, all outputs
  // together. Absent where every element was compared (and in runs before sampling).
  std::optional<std::int64_t> sampled_elements;
  // The GPU that ran it, as kq run --devices numbers them, where the stage was given a list of
  // GPUs to spread its workers over (the parent adds it: the worker sees its GPU as device 0).
  std::optional<int> gpu;
};

struct CaseCounts {
  int passed = 0, refused = 0, failed = 0, skipped = 0, total = 0;
  bool operator==(const CaseCounts&) const = default;
  CaseCounts& operator+=(const CaseCounts& c) {
    passed += c.passed;
    refused += c.refused;
    failed += c.failed;
    skipped += c.skipped;
    total += c.total;
    return *this;
  }
};

struct VerdictRecord {
  static constexpr std::string_view kType = "verdict";
  std::string arm;
  Verdict verdict = Verdict::not_run;
  std::optional<std::string> check, case_name, detail;
  std::optional<CaseCounts> counts;
  std::optional<std::string> pass;
  std::optional<CaseStages> stages;  // the arm's cases' stages, summed
};

struct SanitizerFinding {
  static constexpr std::string_view kType = "sanitizer";
  std::string arm, tool, log;  // log: the file name under logs/
  long errors = -1;            // negative: the log held no summary
  std::string first;           // the first error's line
  std::string verdict_under_tool;
  bool operator==(const SanitizerFinding&) const = default;
};

// ---- rounds.jsonl ----

struct SizeStart {
  static constexpr std::string_view kType = "size_start";
  std::int64_t size = 0;          // format 1: elements; format 2: the timing point's number
  std::vector<std::string> arms;  // the arms set up for this size
  std::string l2;                 // the L2 policy
  std::uint64_t check_seed = 0;   // which samples are checked
  // Format 2: the point ("M=32768,N=4096"), the bytes one call moves and its FLOPs.
  std::optional<std::string> point;
  std::optional<double> bytes, flops;
  // Seconds each arm's set-up took (prepare, the warm-up, the graph's capture), as `arms`.
  std::vector<double> arm_setup_s;
};

struct ArmSkip {  // an arm that could not be set up (or captured, mode graph) at this size
  static constexpr std::string_view kType = "arm_skip";
  std::string arm;
  std::int64_t size = 0;
  std::string reason;
  std::optional<std::string> mode;
  bool operator==(const ArmSkip&) const = default;
};

struct ArmNote {  // what the timing said about how an arm was timed
  static constexpr std::string_view kType = "arm_note";
  std::string arm;
  std::int64_t size = 0;
  std::string note;
  bool operator==(const ArmNote&) const = default;
};

struct GraphInfo {  // the captured graph
  static constexpr std::string_view kType = "graph";
  std::string arm;
  std::int64_t size = 0;
  int launches = 0, kernel_nodes = 0, work_nodes = 0;
};

// The fields every sample carries: which round, its time, whether its blocking kernel held
// (absent: none used) and the SM clock measured after it (absent: not measured).
struct SampleCommon {
  std::int64_t size = 0;
  int round = 0;
  double seconds = 0;
  std::optional<bool> held;
  std::optional<double> sm_clock_mhz;
};

// A copy, the speed of light (timing/light.hpp), or with `flops` the compute light: the
// vendor GEMM (timing/compute_light.hpp).
struct LightSample : SampleCommon {
  static constexpr std::string_view kType = "light";
  double bytes = 0;                   // read and written by the copy (0: the compute light)
  std::optional<std::string> device;  // "cpu": the host copy; absent: on the CUDA device
  std::optional<double> flops;        // the compute light: one product's FLOPs
  std::optional<std::string> what;    // the compute light: "bf16 4096^3 (f32 accumulation)"
};

struct FloorSample : SampleCommon {  // the launch floor: an empty kernel (timing/light.hpp)
  static constexpr std::string_view kType = "floor";
};

struct RoundSample : SampleCommon {  // one timed sample of one arm
  static constexpr std::string_view kType = "round";
  std::string arm;
  std::string mode = "single";         // single or graph
  std::optional<double> host_seconds;  // single CUDA samples: the enqueue alone
  std::optional<int> launches;         // graph samples: calls per replay
  std::optional<bool> checked;         // true: its output was compared with the reference
};

struct TimingReject {  // a timing check failed: the arm is rejected for the rest of the run
  static constexpr std::string_view kType = "timing_reject";
  std::string arm;
  std::int64_t size = 0;
  std::string mode;
  int round = -1;     // -1: not a sample (the set-up, a graph's first replay, the stream check)
  std::string check;  // timing_output, graph_output, wrong_stream or device_state
  std::string message;
  std::optional<std::int64_t> index;
  std::optional<std::string> expected, got;
};

struct SizeEnd {
  static constexpr std::string_view kType = "size_end";
  std::int64_t size = 0;
  int rounds = 0;
  std::string stopped_by;
  double elapsed_s = 0;           // the rounds
  std::optional<double> setup_s;  // before them: the arms', the reference, the checks
  // Of the rounds: the checked samples' comparisons (the changed inputs' reference evaluated
  // again, the output compared), how many, and how many of those on the host, with why.
  std::optional<double> check_s, patch_s;  // patch_s: of check_s, the reference's evaluation
  // The arms' samples whole (a sample's changed inputs, flush, call, check, poison, record) and
  // the controls' (light_s): the rest of elapsed_s is the stopping rule's.
  std::optional<double> sample_s, light_s;
  std::optional<int> checks, host_checks;
  std::string host_checks_why;
};

struct Recheck {  // a size's output checks, summed up per arm
  static constexpr std::string_view kType = "recheck";
  std::string arm;
  std::int64_t size = 0;
  bool ok = true;
  std::optional<int> checked;
  std::optional<std::string> message;
};

// One extra call under CUPTI (device/kernel_profile.hpp): what it launched and where.
struct Profile {
  static constexpr std::string_view kType = "profile";
  std::string arm;
  std::int64_t size = 0;
  json body;  // kernels, kernel_seconds, memcpys, memsets, list, stream_id, off_stream, ...
};

struct ProfilerAttached {  // CUPTI could not be detached after this size
  static constexpr std::string_view kType = "profiler_attached";
  std::int64_t size = 0;
  std::string reason;
};

// GPU work that no call being made launched (another thread's, between calls) ran while `arm`'s
// profiled call did: the timing worker was disturbed, and none of its arms is adopted.
struct Disturbed {
  static constexpr std::string_view kType = "disturbed";
  std::int64_t size = 0;
  std::string arm;  // whose call it coincided with, not its author
  std::string what;
};

// The timing stage runs its arms in one or more workers, one after another (timing/
// timing_workers.hpp). Each worker's records follow its worker_start. The clean worker (label
// "") holds kq's own good arms; an isolated one holds one file's arms beside the references (the
// baseline and the eager arm, timed again there under the names "arm@label") and the controls.
// Runs written before isolation have no worker_start: all their records are the clean worker's.
struct WorkerStart {
  static constexpr std::string_view kType = "worker_start";
  std::string label;                    // "" for the clean worker
  std::string file;                     // the plugin or arm file an isolated worker holds
  std::string reason;                   // why it is isolated
  std::vector<std::string> arms;        // its own arms, as timed
  std::vector<std::string> references;  // "torch_compile@label": the references' instances
};

struct TimingStopped {  // the timing worker stopped before it finished
  static constexpr std::string_view kType = "timing_stopped";
  std::string reason;
};

struct Done {  // worker to parent: the timing worker finished
  static constexpr std::string_view kType = "done";
};

// From a timing worker started beside qualification (timing/early_worker.hpp): its arms' first
// calls made at the timed points, and how long they took (compiles, plan searches), written after
// its worker_start...
struct Warmed {
  static constexpr std::string_view kType = "warmed";
  double seconds = 0;
  int calls = 0;
};
// ...then, while it waits for the arms that qualified, a sign of life every minute (worker to
// parent only).
struct Alive {
  static constexpr std::string_view kType = "alive";
};

// The record's "type", or "" for anything that is not an object with a string "type".
std::string_view type_of(const json& j);
template <class R>
bool is(const json& j) {
  return type_of(j) == R::kType;
}

// Every record type, for what is written once per type (the JSON functions below).
#define KQ_RECORD_TYPES(X) \
  X(CaseStart)             \
  X(Prepared)              \
  X(Waiting)               \
  X(CaseResult)            \
  X(CaseStages)            \
  X(CaseCounts)            \
  X(VerdictRecord)         \
  X(SanitizerFinding)      \
  X(SizeStart)             \
  X(ArmSkip)               \
  X(ArmNote)               \
  X(GraphInfo)             \
  X(LightSample)           \
  X(FloorSample)           \
  X(RoundSample)           \
  X(TimingReject)          \
  X(SizeEnd)               \
  X(Recheck)               \
  X(Profile)               \
  X(ProfilerAttached) X(Disturbed) X(WorkerStart) X(TimingStopped) X(Done) X(Warmed) X(Alive)

#define KQ_RECORD_JSON(R)            \
  void to_json(json& j, const R& r); \
  void from_json(const json& j, R& r);
KQ_RECORD_TYPES(KQ_RECORD_JSON)
#undef KQ_RECORD_JSON

}  // namespace kq::rec
