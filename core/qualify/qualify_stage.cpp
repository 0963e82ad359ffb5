#include "qualify/qualify_stage.hpp"

#include "device/memory.hpp"
#include "util/json_lines.hpp"
#include "worker/supervise.hpp"

namespace kq {

std::vector<nlohmann::json> qualify_stage(const std::vector<StageArm>& arms,
                                          const QualifyStageOptions& opt) {
  using nlohmann::json;
  JsonLinesWriter out(opt.out_jsonl);
  std::vector<json> verdicts;
  std::string no_cuda_reason;
  const bool cuda_ok = cuda_usable(&no_cuda_reason);

  for (const StageArm& a : arms) {
    const std::string& name = a.identity.name;
    auto record = [&](const json& j) {
      out.write(j);
      if (opt.on_record) opt.on_record(j);
    };
    if (a.identity.device == Device::cuda && !cuda_ok) {
      json v = {
          {"type", "verdict"}, {"arm", name}, {"verdict", "skipped"}, {"detail", no_cuda_reason}};
      record(v);
      verdicts.push_back(v);
      continue;
    }
    std::vector<std::string> argv = {self_executable().string(),
                                     "__worker-qualify",
                                     "--spec",
                                     opt.spec_file.string(),
                                     "--plugin",
                                     a.plugin_file.string(),
                                     "--arm",
                                     name};
    if (opt.quick) argv.push_back("--quick");
    json verdict;
    std::string last_case;
    const double startup_s = opt.hang_timeout_s + 30.0;  // plugin load, CUDA context creation
    WorkerExit ex = supervise_worker(argv, opt.log_dir / ("qualify-" + name + ".log"), startup_s,
                                     [&](const json& j) {
                                       record(j);
                                       std::string type = j.value("type", "");
                                       if (type == "verdict") verdict = j;
                                       if (type == "case_start") {
                                         last_case = j.value("case", "");
                                         return j.value("budget_s", opt.hang_timeout_s);
                                       }
                                       return opt.hang_timeout_s;
                                     });
    if (verdict.is_null() || ex.hung) {
      verdict = {{"type", "verdict"},
                 {"arm", name},
                 {"verdict", ex.hung ? "hung" : "crashed"},
                 {"check", ex.hung ? "hang" : "crash"},
                 {"case", last_case},
                 {"detail", "worker " + ex.describe() +
                                (last_case.empty() ? "" : " during case " + last_case)}};
      record(verdict);
    }
    verdicts.push_back(verdict);
  }
  return verdicts;
}

}  // namespace kq
