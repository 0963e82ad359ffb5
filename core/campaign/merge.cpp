#include "campaign/merge.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include "campaign/slurm.hpp"

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
  row.kq_commit = rs.kq.commit + (rs.kq.dirty ? "+dirty" : "");
  row.headline = headline_text(rs.headline, Markup::markdown);
  row.decision = rs.decision.sentence;
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

void flag_provenance(
    CampaignSummary& s,
    const std::map<std::string, std::map<std::string, std::vector<std::string>>>& sources) {
  std::map<std::string, std::vector<std::string>> commits;
  for (const TaskRow& r : s.tasks)
    if (!r.kq_commit.empty()) commits[r.kq_commit].push_back(r.task.id);
  if (commits.size() > 1) {
    std::string f = "the tasks ran " + std::to_string(commits.size()) + " kq builds:";
    for (const auto& [c, ids] : commits) f += " " + c + " (" + joined(ids) + ");";
    s.flags.push_back(f);
  }
  for (const auto& [arm, by_sources] : sources)
    if (by_sources.size() > 1) {
      std::string f = "arm " + arm + " ran from different sources:";
      for (const auto& [_, ids] : by_sources) f += " one set in " + joined(ids) + ";";
      s.flags.push_back(f);
    }
  for (const TaskRow& r : s.tasks)
    if (r.kq_commit.find("+dirty") != std::string::npos) {
      s.flags.push_back("task " + r.task.id + " ran a kq built from uncommitted sources");
      break;
    }
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

CampaignSummary merge_campaign(const fs::path& campaign) {
  const CampaignPlan plan = read_plan(campaign);
  CampaignSummary s;
  s.campaign = fs::absolute(campaign).string();
  s.created = plan.created;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> sources;
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
    if (!row.record.ended.empty()) s.task_wall_s += row.record.wall_s;
    // A task that never finished under Slurm: what the scheduler says of it (TIMEOUT,
    // NODE_FAIL, OUT_OF_MEMORY, CANCELLED).
    if (row.record.state == TaskState::running && !row.record.slurm_job.empty())
      row.slurm_state =
          slurm_job_state(row.record.slurm_job.substr(0, row.record.slurm_job.find(' ')));
    const fs::path run_dir = campaign / t.run_dir;
    if (row.record.state == TaskState::completed && fs::exists(run_dir / "manifest.json"))
      read_task_run(run_dir, row, sources);
    s.tasks.push_back(std::move(row));
  }
  flag_provenance(s, sources);
  find_disagreements(s);
  return s;
}

namespace {

std::string state_text(const TaskRow& r) {
  switch (r.record.state) {
    case TaskState::completed:
      return "completed";
    case TaskState::failed:
      return "failed: " + r.record.reason;
    case TaskState::running:
      return "never finished (started " + r.record.started + " on " + r.record.host +
             (r.record.slurm_job.empty() ? "" : ", Slurm job " + r.record.slurm_job) +
             (r.slurm_state.empty() ? "" : ", which Slurm ended as " + r.slurm_state) +
             "; its node, its time limit or a kill ended it)";
    case TaskState::not_started:
      return "never started";
  }
  return "?";
}

std::string cell(std::string text) {
  for (char& c : text)
    if (c == '|' || c == '\n') c = ' ';
  return text;
}

}  // namespace

std::string campaign_markdown(const CampaignSummary& s) {
  std::string md = "# kq campaign\n\n- campaign: " + s.campaign + "\n- planned: " + s.created +
                   "\n- tasks: " + std::to_string(s.tasks.size()) + ": " +
                   std::to_string(s.completed) + " completed, " + std::to_string(s.failed) +
                   " failed, " + std::to_string(s.running) + " never finished, " +
                   std::to_string(s.not_started) + " never started; " +
                   format_duration(s.task_wall_s, Markup::markdown) + " of task time\n";
  for (const std::string& f : s.flags) md += "- **flag:** " + f + "\n";
  md +=
      "\n## Tasks\n\n| task | spec | GPU type | GPU | state | wall | decision |\n"
      "|---|---|---|---|---|---:|---|\n";
  for (const TaskRow& r : s.tasks)
    md += "| " + r.task.id + " | " + r.task.op + " | " + r.task.gpu_type + " | " +
          cell(r.gpu.empty() ? "-" : r.gpu) + " | " + cell(state_text(r)) + " | " +
          (r.record.ended.empty() ? "-" : format_duration(r.record.wall_s, Markup::markdown)) +
          " | " + cell(r.decision.empty() ? "-" : r.decision) + " |\n";
  if (!s.disagreements.empty()) {
    md += "\n## Where GPU types disagree\n\n";
    for (const std::string& d : s.disagreements) md += "- " + d + "\n";
  }
  // Arm x task: what each arm came to in each completed task.
  std::vector<std::string> arms;
  for (const TaskRow& r : s.tasks)
    for (const ArmOutcome& a : r.arms)
      if (std::find(arms.begin(), arms.end(), a.arm) == arms.end()) arms.push_back(a.arm);
  std::sort(arms.begin(), arms.end());
  if (!arms.empty()) {
    md += "\n## Arms by task\n\n| arm |";
    std::string rule = "|---|";
    for (const TaskRow& r : s.tasks)
      if (!r.arms.empty()) {
        md += " " + r.task.op + " (" + r.task.gpu_type + ") |";
        rule += "---|";
      }
    md += "\n" + rule + "\n";
    for (const std::string& arm : arms) {
      md += "| " + arm + " |";
      for (const TaskRow& r : s.tasks) {
        if (r.arms.empty()) continue;
        auto it = std::find_if(r.arms.begin(), r.arms.end(),
                               [&](const ArmOutcome& o) { return o.arm == arm; });
        md += " " + (it == r.arms.end() ? std::string("-") : it->outcome) + " |";
      }
      md += "\n";
    }
  }
  return md;
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
  f("kq_commit", r.kq_commit, jf::kOmitEmpty);
  f("decision", r.decision, jf::kOmitEmpty);
  f("baseline", r.baseline, jf::kOmitEmpty);
  f("adopted", r.adopted);
  f("arms", r.arms);
  f("problems", r.problems, jf::kOmitEmpty);
  f("slurm_state", r.slurm_state, jf::kOmitEmpty);
}
KQ_JSON_FIELDS(CampaignSummary) {
  f("campaign", r.campaign);
  f("created", r.created);
  f("completed", r.completed);
  f("failed", r.failed);
  f("running", r.running);
  f("not_started", r.not_started);
  f("task_wall_s", r.task_wall_s);
  f("flags", r.flags);
  f("disagreements", r.disagreements);
  f("tasks", r.tasks);
}
void to_json(nlohmann::json& j, const ArmOutcome& r) { jf::write_fields(j, r); }
void to_json(nlohmann::json& j, const TaskRow& r) { jf::write_fields(j, r); }
void to_json(nlohmann::json& j, const CampaignSummary& r) { jf::write_fields(j, r); }

void write_campaign_report(const CampaignSummary& s, const fs::path& campaign) {
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream out(campaign / name);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + (campaign / name).string());
  };
  write("campaign.md", campaign_markdown(s));
  write("campaign.json", nlohmann::json(s).dump(2) + "\n");
}

}  // namespace kq::campaign
