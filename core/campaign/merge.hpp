// kq merge: a campaign's run directories, each read through the same typed reader as kq report
// (record/ and summary/), condensed into one CampaignSummary, and printed as campaign.md and
// campaign.json in the campaign folder. Every task of the plan has a row, whatever its state:
// completed (its decision), failed (why), running (it never finished: its node or time limit
// ended it), or not started.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/plan.hpp"
#include "campaign/task_record.hpp"

namespace kq::campaign {

// What one arm came to in one task.
struct ArmOutcome {
  std::string arm;
  std::string outcome;  // "adopted", "baseline", "qualified", "rejected (values)", "crashed", ...
  bool operator==(const ArmOutcome&) const = default;
};

struct TaskRow {
  Task task;
  TaskRecord record;
  std::string gpu;                    // the GPU the run saw ("" where it ran on none)
  std::string host, cuda;             // its host; "driver 13.0, runtime 13.0" ("" without CUDA)
  std::string environment;            // what the plugins said of theirs (Python, torch, Triton)
  std::string kq_commit;              // with "+dirty" where the build was
  std::string headline, decision;     // the run's counts line and decision sentence
  std::string baseline;               // the baseline used ("" for none)
  std::vector<std::string> adopted;   // arms the decision adopts at some point
  std::vector<ArmOutcome> arms;       // in the run's order
  std::vector<std::string> problems;  // what could not be read of the run
  std::string slurm_state;            // sacct's state of a task that never finished
  std::string timing_stopped;         // why its timing stopped early ("" where it did not)
  // The environment variables of the run that change its arms (MachineFacts::environment).
  std::map<std::string, std::string> settings;
  bool operator==(const TaskRow&) const = default;
};

// The tasks one of several GPUs ran (kq sweep --devices), and their time.
struct GpuBusy {
  std::string gpu;  // "GPU 1 (NVIDIA H200)"
  int tasks = 0;
  double busy_s = 0;  // their wall time, summed
  bool operator==(const GpuBusy&) const = default;
};

struct CampaignSummary {
  std::string campaign, created;
  std::vector<TaskRow> tasks;  // the plan's order
  int completed = 0, failed = 0, running = 0, not_started = 0;
  int cut_short = 0;          // of the completed: runs whose timing stopped early
  double task_wall_s = 0;     // summed over the tasks that ended
  double span_s = 0;          // from the first task's start to the last one's end
  std::vector<GpuBusy> gpus;  // by GPU, in the order first met, where tasks were spread over GPUs
  // Provenance flags: tasks that ran other kq commits, or an arm whose sources differ between
  // tasks; and specs whose decision differs between GPU types.
  std::vector<std::string> flags, disagreements;
  bool operator==(const CampaignSummary&) const = default;
};

CampaignSummary merge_campaign(const std::filesystem::path& campaign);

// Adds a flag for each setting (TaskRow::settings) that differs between the tasks that ran:
// "the tasks ran under different TORCHINDUCTOR_COMPILE_THREADS: unset in 000-...; 4 in 003-...".
// A task run under other settings is not the same measurement, even on the same build and GPU.
void flag_settings(CampaignSummary& s);

void to_json(nlohmann::json& j, const CampaignSummary& r);

// The report (campaign_report.cpp): campaign.md, campaign.html and campaign.json, written into
// the campaign folder.
std::string campaign_markdown(const CampaignSummary& s);
std::string campaign_html(const CampaignSummary& s);
void write_campaign_report(const CampaignSummary& s, const std::filesystem::path& campaign);

}  // namespace kq::campaign
