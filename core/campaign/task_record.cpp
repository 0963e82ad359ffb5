#include "campaign/task_record.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/json_fields.hpp"

namespace kq::campaign {

const char* to_string(TaskState s) {
  switch (s) {
    case TaskState::not_started:
      return "not_started";
    case TaskState::running:
      return "running";
    case TaskState::completed:
      return "completed";
    case TaskState::failed:
      return "failed";
  }
  return "?";
}

NLOHMANN_JSON_SERIALIZE_ENUM(TaskState, {{TaskState::not_started, "not_started"},
                                         {TaskState::running, "running"},
                                         {TaskState::completed, "completed"},
                                         {TaskState::failed, "failed"}})

KQ_JSON_FIELDS(TaskRecord) {
  f("index", r.index);
  f("id", r.id);
  f("state", r.state);
  f("host", r.host, jf::kOmitEmpty);
  f("started", r.started, jf::kOmitEmpty);
  f("ended", r.ended, jf::kOmitEmpty);
  f("wall_s", r.wall_s);
  f("exit_code", r.exit_code);
  f("signal", r.signal);
  f("reason", r.reason, jf::kOmitEmpty);
  f("slurm_job", r.slurm_job, jf::kOmitEmpty);
  f("gpu", r.gpu, jf::kOmitEmpty);
}
void to_json(nlohmann::json& j, const TaskRecord& r) { jf::write_fields(j, r); }
void from_json(const nlohmann::json& j, TaskRecord& r) { jf::read_fields(j, r); }

std::filesystem::path record_path(const std::filesystem::path& campaign, const Task& t) {
  return campaign / "tasks" / (t.id + ".json");
}

void write_record(const std::filesystem::path& campaign, const Task& t, const TaskRecord& r) {
  const std::filesystem::path file = record_path(campaign, t);
  std::filesystem::create_directories(file.parent_path());
  // Written aside and renamed: a reader never sees half a record.
  const std::filesystem::path part = file.string() + ".part";
  {
    std::ofstream out(part);
    out << nlohmann::json(r).dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + part.string());
  }
  std::filesystem::rename(part, file);
}

TaskRecord read_record(const std::filesystem::path& campaign, const Task& t) {
  TaskRecord r;
  r.index = t.index;
  r.id = t.id;
  std::ifstream in(record_path(campaign, t));
  if (!in) return r;
  try {
    r = nlohmann::json::parse(in).get<TaskRecord>();
  } catch (const nlohmann::json::exception& e) {
    r.state = TaskState::failed;
    r.reason = record_path(campaign, t).string() + " is unreadable: " + e.what();
  }
  // A completed task is its run directory's result: where that is gone (deleted, or a copy of
  // the campaign that left the runs behind), the task is not done, and --resume runs it again.
  const std::filesystem::path summary = campaign / t.run_dir / "summary.json";
  if (r.state == TaskState::completed && !std::filesystem::exists(summary)) {
    r.state = TaskState::failed;
    r.reason = "its record says completed, but " + summary.string() +
               " is missing: the run's result is lost";
  }
  return r;
}

}  // namespace kq::campaign
