// The timing stage, parent side: one worker process runs every qualified arm (so that they
// share one device, one clock and one schedule) and streams its records into rounds.jsonl.
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "qualify/qualify_stage.hpp"

namespace kq {

struct TimeStageOptions {
  std::filesystem::path spec_file;
  std::filesystem::path out_jsonl;      // rounds.jsonl
  std::filesystem::path log_file;       // the worker's stderr
  std::vector<std::int64_t> sizes;      // overrides the spec's timing sizes when not empty
  std::vector<Point> added_points;      // format 2: appended to the spec's timing points
  std::filesystem::path artifacts_dir;  // when set: artifacts/<arm>/timing-* are written there
  bool blocking_kernel = true;          // false: time CUDA samples without holding the stream
  double cpu_call_budget_s = 0.05;      // TimingPolicy::cpu_call_budget_s
  // A few rounds per size (8 to 16, 5 s at most, 10 ms of warm-up): enough for the timing
  // checks to run (kq selftest), not for a decision.
  bool brief = false;
  double silence_timeout_s = 300.0;
  std::function<void(const nlohmann::json&)> on_record;
};

struct TimeStageResult {
  bool completed = false;
  std::string problem;  // when the worker died or hung
};

TimeStageResult time_stage(const std::vector<StageArm>& arms, const TimeStageOptions& options);

}  // namespace kq
