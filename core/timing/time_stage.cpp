#include "timing/time_stage.hpp"

#include <iostream>

#include "record/records.hpp"
#include "timing/early_worker.hpp"
#include "timing/worker_command.hpp"
#include "util/json_lines.hpp"
#include "worker/supervise.hpp"

namespace kq {
namespace {

// One worker's run: its worker_start, then its records as they come. Returns "" when it
// finished, else what happened to it (also written as its timing_stopped record).
std::string run_worker(const TimingWorkerPlan& plan, const TimeStageOptions& opt,
                       const std::function<void(const nlohmann::json&)>& write) {
  write(rec::WorkerStart{plan.label, plan.file, plan.reason, names_of(plan.arms),
                         names_of(plan.references)});
  bool done = false;
  WorkerExit ex = supervise_worker(worker_command(plan, opt), worker_log(plan, opt),
                                   opt.silence_timeout_s, [&](const nlohmann::json& j) {
                                     if (rec::is<rec::Done>(j))
                                       done = true;
                                     else
                                       write(j);
                                     return opt.silence_timeout_s;
                                   });
  return worker_problem(plan, done, ex, write);
}

}  // namespace

std::string worker_problem(const TimingWorkerPlan& plan, bool done, const WorkerExit& ex,
                           const std::function<void(const nlohmann::json&)>& write) {
  if (done && !ex.hung && ex.exit_code == 0) return {};
  const std::string problem = "timing worker" +
                              (plan.label.empty() ? std::string() : " " + plan.label) + " " +
                              ex.describe();
  write(rec::TimingStopped{problem});  // for the reports
  return problem;
}

TimeStageResult time_stage(const std::vector<StageArm>& arms, const TimeStageOptions& opt,
                           EarlyTimingWorker* early) {
  TimeStageResult res;
  res.completed = true;
  if (arms.empty()) return res;
  JsonLinesWriter out(opt.out_jsonl);
  auto write = [&](const nlohmann::json& j) {
    out.write(j);
    if (opt.on_record) opt.on_record(j);
  };
  // One worker at a time: the workers share the device, and what one measures must not be
  // disturbed by another. A worker that dies loses only its own arms' remaining samples.
  for (const TimingWorkerPlan& plan : plan_timing_workers(arms, opt.isolation)) {
    std::optional<std::string> problem;
    if (early != nullptr) problem = early->time(plan, write);
    early = nullptr;  // the first plan only: the clean worker, if any
    if (!problem) problem = run_worker(plan, opt, write);
    if (problem->empty()) continue;
    if (res.completed) res.problem = *problem;
    res.completed = false;
  }
  return res;
}

}  // namespace kq
