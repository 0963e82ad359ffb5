#include "campaign/merge.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "campaign/slurm.hpp"
#include "campaign/utc.hpp"
#include "record/run_data.hpp"
#include "report/report_text.hpp"
#include "summary/summarize.hpp"
#include "util/json_fields.hpp"

namespace kq::campaign {
namespace {

namespace fs = std::filesystem;

std::string outcome(const ArmRow& a, const TaskRow& row) {
  if (std::find(row.adopted.begin(), row.adopted.end(), a.name) != row.adopted.end())
    return "adopted";
  if (a.name == row.baseline) return "baseline";
  if (a.verdict == rec::Verdict::rejected) return "rejected (" + a.check.value_or("?") + ")";
  return std::string(rec::to_string(a.verdict));
}

// A completed (or failed but written) run's rows, read as kq report reads it.
void read_task_run(
    const fs::path& run_dir, TaskRow& row,
    std::map<std::string, std::map<std::string, std::vector<std::string>>>& sources) {
  const RunData run = read_run(run_dir);
  const RunSummary rs = summarize(run);
  row.problems = rs.problems;
  row.gpu = rs.machine.gpus.empty() ? "" : rs.machine.gpus.front().name;
  row.host = rs.machine.hostname;
  const auto cuda = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  if (rs.machine.cuda_driver > 0)
    row.cuda =
        "driver " + cuda(rs.machine.cuda_driver) + ", runtime " + cuda(rs.machine.cuda_runtime);
  row.environment = joined(environment_lines(rs.plugin_environment), "; ");
  row.settings = rs.machine.environment;
  row.kq_commit = rs.kq.commit + (rs.kq.dirty ? "+dirty" : "");
  row.headline = headline_text(rs.headline, Markup::markdown);
  row.decision = rs.decision.sentence;
  row.timing_stopped = rs.timing_stopped.value_or("");
  row.baseline = rs.decision.baseline_ran ? rs.decision.baseline : "";
  for (const WinRange& w : rs.decision.ranges)
    if (std::find(row.adopted.begin(), row.adopted.end(), w.arm) == row.adopted.end())
      row.adopted.push_back(w.arm);
  for (const ArmRow& a : rs.arms) row.arms.push_back({a.name, outcome(a, row)});
  for (const ManifestArm& m : run.manifest.arms)
    sources[m.name][joined(m.sources, "; ")].push_back(row.task.id);
}

// "adopt a, b" or "keep torch_compile": what a task's decision comes to, for comparing GPU types.
std::string verdict_of(const TaskRow& r) {
  if (!r.adopted.empty()) return "adopt " + joined(r.adopted);
  return r.baseline.empty() ? "no decision" : "keep " + r.baseline;
}

// The ids of up to three tasks, and how many more.
std::string some_ids(const std::vector<std::string>& ids) {
  std::vector<std::string> shown(ids.begin(), ids.begin() + std::min<std::size_t>(ids.size(), 3));
  std::string s = joined(shown);
  if (ids.size() > 3) s += " and " + std::to_string(ids.size() - 3) + " more";
  return s;
}

void flag_provenance(
    CampaignSummary& s,
    const std::map<std::string, std::map<std::string, std::vector<std::string>>>& sources) {
  std::map<std::string, std::vector<std::string>> commits;
  for (const TaskRow& r : s.tasks)
    if (!r.kq_commit.empty()) commits[r.kq_commit].push_back(r.task.id);
  if (commits.size() > 1) {
    std::vector<std::string> builds;
    for (const auto& [c, ids] : commits) builds.push_back(c + " (" + some_ids(ids) + ")");
    s.flags.push_back("the tasks ran " + std::to_string(commits.size()) +
                      " kq builds: " + joined(builds, "; "));
  }
  for (const auto& [arm, by_sources] : sources)
    if (by_sources.size() > 1) {
      std::vector<std::string> sets;
      for (const auto& [_, ids] : by_sources) sets.push_back("one set in " + joined(ids));
      s.flags.push_back("arm " + arm + " ran from different sources: " + joined(sets, "; "));
    }
  // One GPU type, several GPU models: a local campaign resumed on another machine, or a Slurm
  // type whose nodes differ. Their timings, and so their decisions, do not compare.
  std::map<std::string, std::map<std::string, int>> models;  // GPU type -> model -> tasks
  for (const TaskRow& r : s.tasks)
    if (!r.gpu.empty()) ++models[r.task.gpu_type][r.gpu];
  for (const auto& [type, by_model] : models)
    if (by_model.size() > 1) {
      std::vector<std::string> seen;
      for (const auto& [model, n] : by_model)
        seen.push_back(model + " (" + std::to_string(n) + " task" + (n == 1 ? "" : "s") + ")");
      s.flags.push_back("GPU type " + type + " ran on " + std::to_string(by_model.size()) +
                        " GPU models: " + joined(seen, "; ") +
                        ": their timings and decisions do not compare");
    }
  std::vector<std::string> dirty;
  for (const TaskRow& r : s.tasks)
    if (r.kq_commit.find("+dirty") != std::string::npos) dirty.push_back(r.task.id);
  if (!dirty.empty())
    s.flags.push_back(std::to_string(dirty.size()) + (dirty.size() == 1 ? " task" : " tasks") +
                      " ran a kq built from uncommitted sources: " + some_ids(dirty));
}

// Specs whose decision differs between GPU types, said plainly.
void find_disagreements(CampaignSummary& s) {
  std::map<std::string, std::vector<const TaskRow*>> by_spec;
  for (const TaskRow& r : s.tasks)
    if (r.record.state == TaskState::completed) by_spec[r.task.spec].push_back(&r);
  for (const auto& [spec, rows] : by_spec) {
    std::set<std::string> seen;
    for (const TaskRow* r : rows) seen.insert(verdict_of(*r));
    if (seen.size() < 2) continue;
    std::string line = rows.front()->task.op + ":";
    for (const TaskRow* r : rows) line += " " + verdict_of(*r) + " on " + r->task.gpu_type + ";";
    line.pop_back();
    s.disagreements.push_back(line);
  }
}

}  // namespace

void flag_settings(CampaignSummary& s) {
  std::vector<const TaskRow*> ran;  // the tasks whose run directory was read
  std::vector<const Settings*> settings;
  for (const TaskRow& r : s.tasks)
    if (!r.kq_commit.empty()) {
      ran.push_back(&r);
      settings.push_back(&r.settings);
    }
  for (const std::string& name : differing_settings(settings)) {
    std::map<std::optional<std::string>, std::vector<std::string>> by_value;  // unset first
    for (const TaskRow* r : ran) by_value[setting_of(r->settings, name)].push_back(r->task.id);
    std::vector<std::string> parts;
    for (const auto& [value, ids] : by_value)
      parts.push_back(value.value_or("unset") + " in " + some_ids(ids));
    s.flags.push_back("the tasks ran under different " + name + ": " + joined(parts, "; "));
  }
}

CampaignSummary merge_campaign(const fs::path& campaign) {
  const CampaignPlan plan = read_plan(campaign);
  CampaignSummary s;
  s.campaign = fs::absolute(campaign).string();
  s.created = plan.created;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> sources;
  double first_start = std::numeric_limits<double>::infinity(), last_end = -1;
  for (const Task& t : plan.tasks) {
    TaskRow row;
    row.task = t;
    row.record = read_record(campaign, t);
    switch (row.record.state) {
      case TaskState::completed:
        ++s.completed;
        break;
      case TaskState::failed:
        ++s.failed;
        break;
      case TaskState::running:
        ++s.running;
        break;
      case TaskState::not_started:
        ++s.not_started;
        break;
    }
    if (!row.record.ended.empty()) {
      s.task_wall_s += row.record.wall_s;
      const double started = utc_seconds(row.record.started);
      const double ended = utc_seconds(row.record.ended);
      if (started >= 0 && ended >= started) {
        first_start = std::min(first_start, started);
        last_end = std::max(last_end, ended);
      }
    }
    if (!row.record.gpu.empty() && !row.record.ended.empty()) {
      auto g = std::find_if(s.gpus.begin(), s.gpus.end(),
                            [&](const GpuBusy& b) { return b.gpu == row.record.gpu; });
      if (g == s.gpus.end()) g = s.gpus.insert(s.gpus.end(), GpuBusy{row.record.gpu, 0, 0});
      ++g->tasks;
      g->busy_s += row.record.wall_s;
    }
    // A task that never finished under Slurm: what the scheduler says of it (TIMEOUT,
    // NODE_FAIL, OUT_OF_MEMORY, CANCELLED).
    if (row.record.state == TaskState::running && !row.record.slurm_job.empty())
      row.slurm_state =
          slurm_job_state(row.record.slurm_job.substr(0, row.record.slurm_job.find(' ')));
    const fs::path run_dir = campaign / t.run_dir;
    if (row.record.state == TaskState::completed && fs::exists(run_dir / "manifest.json"))
      read_task_run(run_dir, row, sources);
    if (row.record.state == TaskState::completed && !row.timing_stopped.empty()) ++s.cut_short;
    s.tasks.push_back(std::move(row));
  }
  flag_provenance(s, sources);
  flag_settings(s);
  find_disagreements(s);
  if (last_end >= first_start) s.span_s = last_end - first_start;
  return s;
}

KQ_JSON_FIELDS(GpuBusy) {
  f("gpu", r.gpu);
  f("tasks", r.tasks);
  f("busy_s", r.busy_s);
}
KQ_JSON_FIELDS(ArmOutcome) {
  f("arm", r.arm);
  f("outcome", r.outcome);
}
KQ_JSON_FIELDS(TaskRow) {
  f("index", r.task.index);
  f("id", r.task.id);
  f("spec", r.task.spec);
  f("op", r.task.op);
  f("gpu_type", r.task.gpu_type);
  f("run_dir", r.task.run_dir);
  f("record", r.record);
  f("gpu", r.gpu, jf::kOmitEmpty);
  f("host", r.host, jf::kOmitEmpty);
  f("cuda", r.cuda, jf::kOmitEmpty);
  f("environment", r.environment, jf::kOmitEmpty);
  f("settings", r.settings, jf::kOmitEmpty);
  f("kq_commit", r.kq_commit, jf::kOmitEmpty);
  f("decision", r.decision, jf::kOmitEmpty);
  f("baseline", r.baseline, jf::kOmitEmpty);
  f("adopted", r.adopted);
  f("arms", r.arms);
  f("problems", r.problems, jf::kOmitEmpty);
  f("slurm_state", r.slurm_state, jf::kOmitEmpty);
  f("timing_stopped", r.timing_stopped, jf::kOmitEmpty);
}
KQ_JSON_FIELDS(CampaignSummary) {
  f("campaign", r.campaign);
  f("created", r.created);
  f("completed", r.completed);
  f("timing_cut_short", r.cut_short);
  f("failed", r.failed);
  f("running", r.running);
  f("not_started", r.not_started);
  f("task_wall_s", r.task_wall_s);
  f("span_s", r.span_s);
  f("gpus", r.gpus);
  f("flags", r.flags);
  f("disagreements", r.disagreements);
  f("tasks", r.tasks);
}
void to_json(nlohmann::json& j, const GpuBusy& r) { jf::write_fields(j, r); }
void to_json(nlohmann::json& j, const ArmOutcome& r) { jf::write_fields(j, r); }
void to_json(nlohmann::json& j, const TaskRow& r) { jf::write_fields(j, r); }
void to_json(nlohmann::json& j, const CampaignSummary& r) { jf::write_fields(j, r); }

}  // namespace kq::campaign
