#include "timing/worker_command.hpp"

#include "worker/protocol.hpp"
#include "worker/supervise.hpp"

namespace kq {

std::vector<std::string> names_of(const std::vector<StageArm>& arms) {
  std::vector<std::string> out;
  for (const StageArm& a : arms) out.push_back(a.identity.name);
  return out;
}

std::vector<std::string> worker_command(const TimingWorkerPlan& plan, const TimeStageOptions& opt,
                                        int roster_fd) {
  TimeWorkerArgs w;
  w.spec = opt.spec_file.string();
  for (const auto* list : {&plan.references, &plan.arms})
    for (const StageArm& a : *list) {
      w.plugins.push_back(a.plugin_file.string());
      w.arms.push_back(a.identity.name);
      if (!a.identity.origin.empty()) w.origins.push_back(a.identity.origin);
    }
  w.artifacts_dir = opt.artifacts_dir.string();
  w.no_blocking_kernel = !opt.blocking_kernel;
  w.cpu_call_budget_s = opt.cpu_call_budget_s;
  w.brief = opt.brief;
  w.quick = opt.quick;
  w.sizes = opt.sizes;
  w.added_points = opt.added_points;
  w.roster_fd = roster_fd;
  w.gpu = opt.gpu;
  std::vector<std::string> argv = {self_executable().string(), kWorkerTimeMode};
  for (auto& arg : w.to_argv()) argv.push_back(std::move(arg));
  return argv;
}

std::filesystem::path worker_log(const TimingWorkerPlan& plan, const TimeStageOptions& opt) {
  return plan.label.empty() ? opt.log_file
                            : opt.log_file.parent_path() / ("time-" + plan.label + ".log");
}

}  // namespace kq
