// A campaign on a Slurm cluster: one job array per GPU type (an array index is a task's index in
// the plan; each runs `kq sweep-task CAMPAIGN INDEX`), then a merge job that waits for them all
// (afterany) and runs `kq merge CAMPAIGN`. kq writes the batch scripts into CAMPAIGN/slurm/ and
// hands them to sbatch; nothing else talks to the scheduler but sacct, when a report asks why a
// task never finished. CAMPAIGN must be on a filesystem every node sees.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "campaign/plan.hpp"

namespace kq::campaign {

struct SlurmOptions {
  std::string partition;                 // "" for the cluster's default
  std::string gres;                      // the GPU request: "" for gpu:TYPE:1 (gpu:1 for local),
                                         // "none" for no --gres (a partition that assigns GPUs)
  std::vector<std::string> sbatch_args;  // more #SBATCH lines, as given ("--account=x")
  bool resume = false;                   // only the tasks whose record is not completed
};

struct ArrayJob {
  std::string gpu_type, job_id;
  std::vector<int> indexes;
  std::filesystem::path script;
};

struct SlurmSubmission {
  std::vector<ArrayJob> arrays;  // in the order of the GPU types' first tasks
  std::string merge_job;
  std::filesystem::path merge_script;
};

// The batch script of one GPU type's array, as submitted.
std::string array_script(const CampaignPlan& plan, const std::filesystem::path& campaign,
                         const std::string& gpu_type, const std::vector<int>& indexes,
                         const SlurmOptions& o);

// Writes and submits the arrays and the merge job; a failing sbatch is a std::runtime_error
// with what it said. Nothing left to run: no arrays, no merge job.
SlurmSubmission submit_slurm(const CampaignPlan& plan, const std::filesystem::path& campaign,
                             const SlurmOptions& o);

// Slurm's account of a job ("TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", ...), from sacct; "" where
// sacct is missing or knows nothing of it.
std::string slurm_job_state(const std::string& job);

// Whether `dir` can be written (a file made and removed), else why not.
bool writable(const std::filesystem::path& dir, std::string* why);

}  // namespace kq::campaign
