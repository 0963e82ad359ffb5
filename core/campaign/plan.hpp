// A campaign's plan: one task per (spec, GPU type), each a `kq run` command line with its own run
// directory under the campaign. Written once to CAMPAIGN/plan.json, read by every later step
// (running, resuming, merging), so that what runs is what was planned.
#pragma once
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kq::campaign {

struct SweepOptions {
  std::vector<std::filesystem::path> inputs;  // spec files and folders of them (*.yaml, sorted)
  std::vector<std::string> arms;              // --arms, passed to every task
  bool quick = false;
  std::vector<std::string> gpu_types;  // empty: "local", this machine's GPUs (or none)
  std::filesystem::path out;           // the campaign folder
  std::filesystem::path kq;            // the kq binary each task runs
  double time_limit_s = 0;             // every task's limit; 0: each from its spec's bounds
};

struct Task {
  int index = 0;                  // its place in the plan (a Slurm array index)
  std::string id;                 // "003-softmax_bf16-h200": the names of its run directory and log
  std::string spec;               // absolute path
  std::string op;                 // the spec's op
  std::string gpu_type;           // "local" or one of --gpu-types
  std::vector<std::string> argv;  // the kq run command line (argv[0] the kq binary)
  std::string run_dir;            // relative to the campaign: runs/<id>
  double time_limit_s = 0;  // an upper bound on the task's wall time, from the spec's own bounds
  // Its qualification plan (quick or full, as the task runs): the cases, and the distinct shapes
  // among them. An arm that builds for every static shape (torch.compile's, max-autotune's
  // tuning above all) builds at least once a shape: that, more than the cases, sets the time.
  int cases = 0;
  int shapes = 0;
  bool operator==(const Task&) const = default;
};

struct CampaignPlan {
  int schema_version = 1;
  std::string created;  // UTC, ISO 8601
  std::string kq_version, kq_commit;
  std::vector<Task> tasks;
  bool operator==(const CampaignPlan&) const = default;
};

void to_json(nlohmann::json& j, const Task& r);
void from_json(const nlohmann::json& j, Task& r);
void to_json(nlohmann::json& j, const CampaignPlan& r);
void from_json(const nlohmann::json& j, CampaignPlan& r);

// The plan for `o`; a spec that does not load is a SpecError naming its file, an input that is
// neither a spec nor a folder holding one a std::invalid_argument naming it.
CampaignPlan plan_campaign(const SweepOptions& o);

// CAMPAIGN/plan.json.
std::filesystem::path plan_path(const std::filesystem::path& campaign);
void write_plan(const CampaignPlan& plan, const std::filesystem::path& campaign);
// std::runtime_error naming the file when it is missing or not a plan.
CampaignPlan read_plan(const std::filesystem::path& campaign);

}  // namespace kq::campaign
