// Every task of a campaign here, one after another: a spec's timing needs the GPU (or, without
// one, the cores) to itself, so two tasks never run at once on one machine. With `resume`, the
// completed tasks (their records say so) are kept and the others run again.
#pragma once
#include <filesystem>
#include <functional>
#include <vector>

#include "campaign/plan.hpp"
#include "campaign/task_record.hpp"

namespace kq::campaign {

struct LocalOptions {
  bool resume = false;
  // Called before each task runs (record: not started or its last record) and after it ends.
  std::function<void(const Task&)> on_start;
  std::function<void(const Task&, const TaskRecord&)> on_end;
};

// The final record of every task, in the plan's order.
std::vector<TaskRecord> run_local(const CampaignPlan& plan, const std::filesystem::path& campaign,
                                  const LocalOptions& options);

}  // namespace kq::campaign
