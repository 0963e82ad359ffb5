// The qualification stage, parent side: one isolated worker process per arm (the kq binary in
// worker mode). Every record is appended to qualification.jsonl as it arrives; a crash, sticky
// CUDA error or hang becomes that arm's verdict and the stage goes on with the next arm.
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kq/arm.hpp"

namespace kq {

struct StageArm {
  ArmIdentity identity;
  std::filesystem::path plugin_file;
};

struct QualifyStageOptions {
  std::filesystem::path spec_file;  // the spec the workers read (the run's copy)
  std::filesystem::path out_jsonl;  // qualification.jsonl
  std::filesystem::path log_dir;    // workers' stderr: <log_dir>/qualify-<arm>.log
  bool quick = false;               // smaller sizes only
  double hang_timeout_s = 60.0;
  // Called with each record as it arrives (progress display); may be empty.
  std::function<void(const nlohmann::json&)> on_record;
};

// Returns the verdict record of every arm, in the order given. An arm on a device this
// machine cannot use gets verdict "skipped" with the reason, without a worker.
std::vector<nlohmann::json> qualify_stage(const std::vector<StageArm>& arms,
                                          const QualifyStageOptions& options);

}  // namespace kq
