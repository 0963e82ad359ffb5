// One task of a campaign: its `kq run` as a child process (its own process group), stdout and
// stderr appended to CAMPAIGN/logs/<id>.log, the completion record written when it starts and
// when it ends. A run directory left by an earlier attempt is kept, renamed runs/<id>.attempt-N:
// nothing measured is lost. Used by `kq sweep` here and by each Slurm array task.
//
// A stop (SIGINT, SIGTERM, SIGHUP) while tasks run is passed on to them (their kq run ends its
// workers), their records say they were stopped, and stop_signal() tells the caller to start no
// more: a Ctrl-C never leaves a kq run holding the GPU behind it.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "campaign/plan.hpp"
#include "campaign/task_record.hpp"

namespace kq::campaign {

struct TaskOptions {
  std::vector<std::pair<std::string, std::string>> env;  // set in the child (CUDA_VISIBLE_DEVICES)
  std::string gpu;          // the GPU it was given, for its record ("GPU 1 (NVIDIA H200)")
  double time_limit_s = 0;  // killed after this long (0: the task's own limit)
};

// Runs the task to its end and returns its final record: completed where kq run exited 0 or 1
// (a candidate failed: the run itself is whole) and left its summary, else failed with why.
TaskRecord run_task(const std::filesystem::path& campaign, const Task& task,
                    const TaskOptions& options = {});

// The signal that stopped kq while run_task watched (0: none).
int stop_signal();

}  // namespace kq::campaign
