// Every task of a campaign here. A spec's timing needs its GPU (or, without one, the cores) to
// itself, so two tasks never share a GPU: with several GPUs, one task runs on each at a time
// (given it through CUDA_VISIBLE_DEVICES, its record naming it); with one or none, one after
// another. With `resume`, the completed tasks (their records say so) are kept and the others
// run again. After a stop (run_task.hpp: stop_signal) no task starts.
#pragma once
#include <filesystem>
#include <functional>
#include <vector>

#include "campaign/plan.hpp"
#include "campaign/task_record.hpp"
#include "device/gpu_list.hpp"

namespace kq::campaign {

struct LocalOptions {
  bool resume = false;
  // The GPUs the tasks are spread over (kq sweep --devices); empty: the tasks run as they are.
  std::vector<GpuSlot> gpus;
  // Called before each task runs (record: not started or its last record) and after it ends;
  // one call at a time, from whichever thread ran the task.
  std::function<void(const Task&, const std::string& gpu)> on_start;
  std::function<void(const Task&, const TaskRecord&)> on_end;
};

// The final record of every task, in the plan's order.
std::vector<TaskRecord> run_local(const CampaignPlan& plan, const std::filesystem::path& campaign,
                                  const LocalOptions& options);

}  // namespace kq::campaign
