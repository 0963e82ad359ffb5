#include "timing/time_stage.hpp"

#include "util/json_lines.hpp"
#include "worker/supervise.hpp"

namespace kq {

TimeStageResult time_stage(const std::vector<StageArm>& arms, const TimeStageOptions& opt) {
  TimeStageResult res;
  if (arms.empty()) {
    res.completed = true;
    return res;
  }
  JsonLinesWriter out(opt.out_jsonl);
  std::vector<std::string> argv = {self_executable().string(), "__worker-time", "--spec",
                                   opt.spec_file.string()};
  for (const StageArm& a : arms) {
    argv.insert(argv.end(), {"--plugin", a.plugin_file.string(), "--arm", a.identity.name});
  }
  if (!opt.artifacts_dir.empty())
    argv.insert(argv.end(), {"--artifacts-dir", opt.artifacts_dir.string()});
  if (!opt.blocking_kernel) argv.push_back("--no-blocking-kernel");
  if (opt.brief) argv.push_back("--brief");
  if (!opt.sizes.empty()) {
    std::string list;
    for (auto n : opt.sizes) list += (list.empty() ? "" : ",") + std::to_string(n);
    argv.insert(argv.end(), {"--sizes", list});
  }
  bool done = false;
  WorkerExit ex =
      supervise_worker(argv, opt.log_file, opt.silence_timeout_s, [&](const nlohmann::json& j) {
        if (j.value("type", "") == "done") {
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
    out.write({{"type", "timing_stopped"}, {"reason", res.problem}});  // for the reports
  }
  return res;
}

}  // namespace kq
