#include "timing/time_stage.hpp"

#include "record/records.hpp"
#include "util/json_lines.hpp"
#include "worker/protocol.hpp"
#include "worker/supervise.hpp"

namespace kq {

TimeStageResult time_stage(const std::vector<StageArm>& arms, const TimeStageOptions& opt) {
  TimeStageResult res;
  if (arms.empty()) {
    res.completed = true;
    return res;
  }
  JsonLinesWriter out(opt.out_jsonl);
  TimeWorkerArgs w;
  w.spec = opt.spec_file.string();
  for (const StageArm& a : arms) {
    w.plugins.push_back(a.plugin_file.string());
    w.arms.push_back(a.identity.name);
    if (!a.identity.origin.empty()) w.origins.push_back(a.identity.origin);
  }
  w.artifacts_dir = opt.artifacts_dir.string();
  w.no_blocking_kernel = !opt.blocking_kernel;
  w.cpu_call_budget_s = opt.cpu_call_budget_s;
  w.brief = opt.brief;
  w.sizes = opt.sizes;
  w.added_points = opt.added_points;
  std::vector<std::string> argv = {self_executable().string(), kWorkerTimeMode};
  for (auto& arg : w.to_argv()) argv.push_back(std::move(arg));
  bool done = false;
  WorkerExit ex =
      supervise_worker(argv, opt.log_file, opt.silence_timeout_s, [&](const nlohmann::json& j) {
        if (rec::is<rec::Done>(j)) {
          done = true;
        } else {
          out.write(j);
          if (opt.on_record) opt.on_record(j);
        }
        return opt.silence_timeout_s;
      });
  res.completed = done && !ex.hung && ex.exit_code == 0;
  if (!res.completed) {
    res.problem = "timing worker " + ex.describe();
    out.write(rec::TimingStopped{res.problem});  // for the reports
  }
  return res;
}

}  // namespace kq
