// The qualification stage, parent side: one isolated worker process per arm (the kq binary in
// worker mode), up to `jobs` of them at once. Every record is appended to qualification.jsonl as it
// arrives; a crash, sticky CUDA error or hang becomes that arm's verdict and the stage goes on with
// the next arm.
//
// With sanitize tools, each CUDA arm is qualified again under compute-sanitizer once per tool
// (on the quick case list). Those passes' records carry "pass": "<tool>"; each pass ends in a
// sanitizer record (record/records.hpp), and an arm that was qualified but has sanitizer
// errors gets a final verdict "rejected", check "sanitizer_<tool>".
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "device/gpu_list.hpp"
#include "kq/arm.hpp"
#include "record/records.hpp"
#include "spec/shaped.hpp"

namespace kq {

struct StageArm {
  ArmIdentity identity;
  std::filesystem::path plugin_file;
  std::string load_threads;  // LoadedArm::load_threads: the timing isolates such an arm
};

struct QualifyStageOptions {
  std::filesystem::path spec_file;      // the spec the workers read (the run's copy)
  std::filesystem::path out_jsonl;      // qualification.jsonl
  std::filesystem::path log_dir;        // workers' stderr: <log_dir>/qualify-<arm>.log
  std::filesystem::path artifacts_dir;  // when set: artifacts/<arm>/ are written there
  bool quick = false;                   // smaller sizes only
  // The sizes that will be timed (kq run --sizes): each is a qualification case too. Empty:
  // the spec's timing.sizes. Format 2: timing-point numbers, over the spec's points and then
  // added_points (kq run --points: points the spec does not list).
  std::vector<std::int64_t> timing_sizes;
  std::vector<Point> added_points;
  // Workers run at once (qualification is not timed, so arms may share the machine; the
  // verdicts keep the order of the arms given, the records arrive as they come).
  int jobs = 1;
  // The GPUs the CUDA workers are spread over (qualify/gpu_placer.hpp), each case record naming
  // the one that ran it; empty: every worker sees what kq was started with.
  std::vector<GpuSlot> gpus;
  double hang_timeout_s = 60.0;
  // compute-sanitizer tools to run each CUDA arm under (memcheck, initcheck, racecheck,
  // synccheck); empty: none. `sanitizer` is the compute-sanitizer executable.
  std::vector<std::string> sanitize_tools;
  std::filesystem::path sanitizer;
  // Called with each record as it arrives (progress display); may be empty.
  std::function<void(const nlohmann::json&)> on_record;
  // Called for each arm given a worker, once all its workers are done, on the stage's thread
  // for that arm while other arms' workers still run (the artifacts' disassembly and hashes,
  // which took 20 s after a full run's last verdict when done one arm after another); may be
  // empty. An exception stops the stage as a worker's failure to start does.
  std::function<void(const StageArm&)> on_arm_done;

  // The files of a run directory: spec.yaml, qualification.jsonl, logs/, artifacts/.
  static QualifyStageOptions for_run_dir(const std::filesystem::path& dir) {
    QualifyStageOptions o;
    o.spec_file = dir / "spec.yaml";
    o.out_jsonl = dir / "qualification.jsonl";
    o.log_dir = dir / "logs";
    o.artifacts_dir = dir / "artifacts";
    return o;
  }
};

// Returns the final verdict record of every arm, in the order given. An arm on a device this
// machine cannot use gets verdict "skipped" with the reason, without a worker.
std::vector<rec::VerdictRecord> qualify_stage(const std::vector<StageArm>& arms,
                                              const QualifyStageOptions& options);

// Workers at once when the user does not say: half the cores, 1 to 8.
int default_qualify_jobs();

// The compute-sanitizer executable on PATH or in /usr/local/cuda/bin; empty when absent.
std::filesystem::path find_compute_sanitizer();

}  // namespace kq
