// The campaign report: what it says is built once as sections (bullets and a table each), then
// written as markdown and as a self-contained HTML page; campaign.json is the summary itself.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "campaign/merge.hpp"
#include "report/columns.hpp"
#include "report/report_text.hpp"
#include "util/markup.hpp"

namespace kq::campaign {
namespace {

namespace fs = std::filesystem;

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};

struct Section {
  std::string title;  // "" for the header's bullets
  std::vector<std::string> bullets;
  Table table;
};

std::string state_text(const TaskRow& r) {
  switch (r.record.state) {
    case TaskState::completed:
      // Its decision stands on the sizes timed before: said in the decision, named here.
      return r.timing_stopped.empty() ? "completed"
                                      : "completed, timing cut short (" + r.timing_stopped + ")";
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

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

Section header(const CampaignSummary& s) {
  Section h;
  h.bullets = {
      "campaign: " + s.campaign, "planned: " + s.created,
      "tasks: " + std::to_string(s.tasks.size()) + ": " + std::to_string(s.completed) +
          " completed" +
          (s.cut_short > 0 ? " (" + std::to_string(s.cut_short) + " with timing cut short)" : "") +
          ", " + std::to_string(s.failed) + " failed, " + std::to_string(s.running) +
          " never finished, " + std::to_string(s.not_started) + " never started; " +
          format_duration(s.task_wall_s, Markup::markdown) + " of task time" +
          (s.span_s > 0 ? ", " + format_duration(s.span_s, Markup::markdown) +
                              " from the first start to the last end"
                        : "")};
  for (const GpuBusy& g : s.gpus)
    h.bullets.push_back(g.gpu + ": " + std::to_string(g.tasks) + " task(s), busy " +
                        format_duration(g.busy_s, Markup::markdown));
  for (const std::string& f : s.flags) h.bullets.push_back("flag: " + f);
  return h;
}

Section tasks(const CampaignSummary& s) {
  Section t{"Tasks", {}, {{"task", "spec", "GPU type", "GPU", "state", "wall", "decision"}, {}}};
  for (const TaskRow& r : s.tasks)
    t.table.rows.push_back(
        {r.task.id, r.task.op, r.task.gpu_type,
         or_dash(r.record.gpu.empty() ? r.gpu : r.record.gpu), state_text(r),
         r.record.ended.empty() ? "-" : format_duration(r.record.wall_s, Markup::markdown),
         or_dash(r.decision)});
  return t;
}

// Past this many tasks the table has a row per task and a column per arm: a column per task
// would be a hundred wide for KernelBench's level 1, where a dozen or so arms take any spec.
constexpr std::size_t kTasksAcross = 12;

// The outcome of `arm` in task `r`: "-" where its run did not ask the arm.
std::string outcome_in(const TaskRow& r, const std::string& arm) {
  auto it =
      std::find_if(r.arms.begin(), r.arms.end(), [&](const ArmOutcome& o) { return o.arm == arm; });
  return it == r.arms.end() ? "-" : it->outcome;
}

// What each arm came to in each completed task.
Section arms(const CampaignSummary& s) {
  std::vector<std::string> names;
  for (const TaskRow& r : s.tasks)
    for (const ArmOutcome& o : r.arms)
      if (std::find(names.begin(), names.end(), o.arm) == names.end()) names.push_back(o.arm);
  std::sort(names.begin(), names.end());
  std::vector<const TaskRow*> ran;
  for (const TaskRow& r : s.tasks)
    if (!r.arms.empty()) ran.push_back(&r);
  // An arm that took no task's spec (most of a plugin's arms compute a few ops) is named once,
  // under the table, not given a row (or a column) of "unsupported".
  std::vector<std::string> offered, nowhere;
  for (const std::string& arm : names) {
    const bool taken = std::any_of(ran.begin(), ran.end(), [&](const TaskRow* r) {
      const std::string o = outcome_in(*r, arm);
      return o != "-" && o != "unsupported";
    });
    (taken ? offered : nowhere).push_back(arm);
  }
  Section a{"Arms by task", {}, {}};
  if (ran.size() <= kTasksAcross) {
    a.table.head = {"arm"};
    for (const TaskRow* r : ran) a.table.head.push_back(r->task.op + " (" + r->task.gpu_type + ")");
    for (const std::string& arm : offered) {
      std::vector<std::string> row = {arm};
      for (const TaskRow* r : ran) row.push_back(outcome_in(*r, arm));
      a.table.rows.push_back(std::move(row));
    }
  } else {
    a.table.head = {"task"};
    a.table.head.insert(a.table.head.end(), offered.begin(), offered.end());
    for (const TaskRow* r : ran) {
      std::vector<std::string> row = {r->task.op + " (" + r->task.gpu_type + ")"};
      for (const std::string& arm : offered) {
        const std::string o = outcome_in(*r, arm);
        row.push_back(o == "unsupported" ? "" : o);
      }
      a.table.rows.push_back(std::move(row));
    }
    a.bullets.push_back(
        "a row per task, a column per arm that some task's spec took; a blank "
        "cell: the arm does not compute that spec (unsupported), -: not asked");
  }
  if (!nowhere.empty())
    a.bullets.push_back("unsupported by every task's spec: " + joined(nowhere, ", "));
  return a;
}

Section provenance(const CampaignSummary& s) {
  Section p{"Provenance", {}, {{"task", "host", "GPU", "CUDA", "kq", "plugins"}, {}}};
  for (const TaskRow& r : s.tasks)
    if (!r.kq_commit.empty())
      p.table.rows.push_back({r.task.id, r.host, or_dash(r.gpu), or_dash(r.cuda),
                              r.kq_commit.substr(0, 12) +
                                  (r.kq_commit.find("+dirty") != std::string::npos ? "+dirty" : ""),
                              or_dash(r.environment)});
  return p;
}

std::vector<Section> sections(const CampaignSummary& s) {
  std::vector<Section> out = {header(s), tasks(s)};
  if (!s.disagreements.empty()) out.push_back({"Where GPU types disagree", s.disagreements, {}});
  if (Section a = arms(s); !a.table.rows.empty() || !a.bullets.empty()) out.push_back(std::move(a));
  if (Section p = provenance(s); !p.table.rows.empty()) out.push_back(std::move(p));
  return out;
}

std::string md_cell(std::string text) {
  for (char& c : text)
    if (c == '|' || c == '\n') c = ' ';
  return text;
}

}  // namespace

std::string campaign_markdown(const CampaignSummary& s) {
  std::string md = "# kq campaign\n";
  for (const Section& sec : sections(s)) {
    md += sec.title.empty() ? "\n" : "\n## " + sec.title + "\n\n";
    for (const std::string& b : sec.bullets) md += "- " + b + "\n";
    if (sec.table.head.empty()) continue;
    if (!sec.bullets.empty()) md += "\n";
    std::string rule = "|";
    md += "|";
    for (const std::string& h : sec.table.head) {
      md += " " + md_cell(h) + " |";
      rule += h == "wall" ? "---:|" : "---|";
    }
    md += "\n" + rule + "\n";
    for (const auto& row : sec.table.rows) {
      md += "|";
      for (const std::string& c : row) md += " " + md_cell(c) + " |";
      md += "\n";
    }
  }
  return md;
}

std::string campaign_html(const CampaignSummary& s) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kq campaign</title><style>"
      "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
      "th{background:#eee}</style></head><body>\n<h1>kq campaign</h1>\n";
  for (const Section& sec : sections(s)) {
    if (!sec.title.empty()) h += "<h2>" + escape_markup(sec.title) + "</h2>\n";
    if (!sec.bullets.empty()) {
      h += "<ul>\n";
      for (const std::string& b : sec.bullets) h += "<li>" + escape_markup(b) + "</li>\n";
      h += "</ul>\n";
    }
    if (sec.table.head.empty()) continue;
    h += "<table>\n<tr>";
    for (const std::string& c : sec.table.head) h += "<th>" + escape_markup(c) + "</th>";
    h += "</tr>\n";
    for (const auto& row : sec.table.rows) {
      h += "<tr>";
      for (const std::string& c : row) h += "<td>" + escape_markup(c) + "</td>";
      h += "</tr>\n";
    }
    h += "</table>\n";
  }
  return h + "</body></html>\n";
}

void write_campaign_report(const CampaignSummary& s, const fs::path& campaign) {
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream out(campaign / name);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + (campaign / name).string());
  };
  write("campaign.md", campaign_markdown(s));
  write("campaign.html", campaign_html(s));
  write("campaign.json", nlohmann::json(s).dump(2) + "\n");
}

}  // namespace kq::campaign
