#include "timing/time_stage.hpp"

#include "record/records.hpp"
#include "util/json_lines.hpp"
#include "worker/protocol.hpp"
#include "worker/supervise.hpp"

namespace kq {
namespace {

std::vector<std::string> names_of(const std::vector<StageArm>& arms) {
  std::vector<std::string> out;
  for (const StageArm& a : arms) out.push_back(a.identity.name);
  return out;
}

// One worker's run: its worker_start, then its records as they come. Returns "" when it
// finished, else what happened to it (also written as its timing_stopped record).
std::string run_worker(const TimingWorkerPlan& plan, const TimeStageOptions& opt,
                       JsonLinesWriter& out) {
  auto write = [&](const nlohmann::json& j) {
    out.write(j);
    if (opt.on_record) opt.on_record(j);
  };
  write(rec::WorkerStart{plan.label, plan.file, plan.reason, names_of(plan.arms),
                         names_of(plan.references)});
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
  std::vector<std::string> argv = {self_executable().string(), kWorkerTimeMode};
  for (auto& arg : w.to_argv()) argv.push_back(std::move(arg));
  const std::filesystem::path log =
      plan.label.empty() ? opt.log_file
                         : opt.log_file.parent_path() / ("time-" + plan.label + ".log");
  bool done = false;
  WorkerExit ex = supervise_worker(argv, log, opt.silence_timeout_s, [&](const nlohmann::json& j) {
    if (rec::is<rec::Done>(j))
      done = true;
    else
      write(j);
    return opt.silence_timeout_s;
  });
  if (done && !ex.hung && ex.exit_code == 0) return {};
  const std::string problem = "timing worker" +
                              (plan.label.empty() ? std::string() : " " + plan.label) + " " +
                              ex.describe();
  write(rec::TimingStopped{problem});  // for the reports
  return problem;
}

}  // namespace

TimeStageResult time_stage(const std::vector<StageArm>& arms, const TimeStageOptions& opt) {
  TimeStageResult res;
  res.completed = true;
  if (arms.empty()) return res;
  JsonLinesWriter out(opt.out_jsonl);
  // One worker at a time: the workers share the device, and what one measures must not be
  // disturbed by another. A worker that dies loses only its own arms' remaining samples.
  for (const TimingWorkerPlan& plan : plan_timing_workers(arms, opt.isolation)) {
    const std::string problem = run_worker(plan, opt, out);
    if (problem.empty()) continue;
    if (res.completed) res.problem = problem;
    res.completed = false;
  }
  return res;
}

}  // namespace kq
