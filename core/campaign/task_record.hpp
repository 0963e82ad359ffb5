// A task's completion record, CAMPAIGN/tasks/<id>.json: written "running" when its kq run starts
// and again when it ends, so that a task whose node died or whose time ran out is still
// "running" there (kq merge says never finished) and `kq sweep --resume` runs it again.
#pragma once
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "campaign/plan.hpp"

namespace kq::campaign {

enum class TaskState { not_started, running, completed, failed };
const char* to_string(TaskState s);

struct TaskRecord {
  int index = 0;
  std::string id;
  TaskState state = TaskState::not_started;
  std::string host, started, ended;  // UTC, ISO 8601
  double wall_s = 0;
  std::optional<int> exit_code, signal;
  // failed: what went wrong, from the exit and the log's last lines
  std::string reason;
  std::string slurm_job;  // SLURM_JOB_ID (and array task) where Slurm ran it
  std::string gpu;        // "GPU 1 (NVIDIA H200)" where kq sweep gave the task one of several
  bool operator==(const TaskRecord&) const = default;
};

void to_json(nlohmann::json& j, const TaskRecord& r);
void from_json(const nlohmann::json& j, TaskRecord& r);

std::filesystem::path record_path(const std::filesystem::path& campaign, const Task& t);
void write_record(const std::filesystem::path& campaign, const Task& t, const TaskRecord& r);
// The task's record, or one saying not_started where there is none (an unreadable one is
// failed, saying why, as is one saying completed whose run directory holds no summary.json).
TaskRecord read_record(const std::filesystem::path& campaign, const Task& t);

// Completed tasks are kept by --resume; every other state runs again.
inline bool done(const TaskRecord& r) { return r.state == TaskState::completed; }

}  // namespace kq::campaign
