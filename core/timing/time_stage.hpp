// The timing stage, parent side: worker processes, one after another, each timing its arms in
// interleaved rounds (so that they share one device, one clock and one schedule), stream their
// records into rounds.jsonl, each worker's after its worker_start. Which arms share a worker:
// timing/timing_workers.hpp (kq's own good arms together; each file from outside, or of a
// known-broken candidate, apart, beside the references and the controls).
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "qualify/qualify_stage.hpp"
#include "timing/timing_workers.hpp"

namespace kq {

struct TimeStageOptions {
  std::filesystem::path spec_file;
  std::filesystem::path out_jsonl;      // rounds.jsonl
  std::filesystem::path log_file;       // the clean worker's stderr; time-<label>.log beside it
  IsolationPolicy isolation;            // which arms are timed apart
  std::vector<std::int64_t> sizes;      // overrides the spec's timing sizes when not empty
  std::vector<Point> added_points;      // format 2: appended to the spec's timing points
  std::filesystem::path artifacts_dir;  // when set: artifacts/<arm>/timing-* are written there
  bool blocking_kernel = true;          // false: time CUDA samples without holding the stream
  double cpu_call_budget_s = 0.05;      // TimingPolicy::cpu_call_budget_s
  std::string gpu;  // the one GPU every timing worker runs on (CUDA_VISIBLE_DEVICES); empty: kq's
  // A few rounds per size (8 to 16, 5 s at most, 10 ms of warm-up): enough for the timing
  // checks to run (kq selftest), not for a decision.
  bool brief = false;
  bool quick = false;  // kq run --quick: quick_timing() (timing/stopping.hpp)
  double silence_timeout_s = 300.0;
  std::function<void(const nlohmann::json&)> on_record;
};

struct TimeStageResult {
  bool completed = false;  // every worker finished
  std::string problem;     // the first worker that died or hung, and how
};

class EarlyTimingWorker;  // timing/early_worker.hpp
struct WorkerExit;        // worker/supervise.hpp

// `early`: a worker started beside qualification, which times the first plan (the clean
// worker) when it can; else that plan's worker starts here like the others.
TimeStageResult time_stage(const std::vector<StageArm>& arms, const TimeStageOptions& options,
                           EarlyTimingWorker* early = nullptr);

// After a worker of `plan` ended: "" when it finished (`done`: its last record came, and it exited
// 0), else what happened to it, also written as a timing_stopped record.
std::string worker_problem(const TimingWorkerPlan& plan, bool done, const WorkerExit& ex,
                           const std::function<void(const nlohmann::json&)>& write);

}  // namespace kq
