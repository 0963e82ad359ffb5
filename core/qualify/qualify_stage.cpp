#include "qualify/qualify_stage.hpp"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "device/memory.hpp"
#include "util/json_lines.hpp"
#include "worker/supervise.hpp"

namespace kq {
namespace {

using nlohmann::json;

// One worker: `prefix` (a sanitizer command, or nothing) then kq in worker mode. Records are
// passed to `record`, tagged with "pass" when `pass` is not empty. Returns the verdict, made
// up here when the worker died or hung.
json run_worker(const StageArm& a, const QualifyStageOptions& opt,
                const std::vector<std::string>& prefix, const std::string& pass, bool quick,
                const std::filesystem::path& log, const std::function<void(const json&)>& record,
                double slowdown) {
  const std::string& name = a.identity.name;
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(),
              {self_executable().string(), "__worker-qualify", "--spec", opt.spec_file.string(),
               "--plugin", a.plugin_file.string(), "--arm", name});
  if (quick) argv.push_back("--quick");
  argv.insert(argv.end(), {"--hang-timeout", std::to_string(opt.hang_timeout_s)});
  if (pass.empty() && !opt.artifacts_dir.empty())
    argv.insert(argv.end(), {"--artifacts-dir", opt.artifacts_dir.string()});
  json verdict;
  std::string last_case;
  const double startup_s = (opt.hang_timeout_s + 30.0) * slowdown;  // plugin load, CUDA context
  WorkerExit ex = supervise_worker(argv, log, startup_s, [&](json j) {
    if (!pass.empty()) j["pass"] = pass;
    record(j);
    const std::string type = j.value("type", "");
    if (type == "verdict") verdict = j;
    if (type == "case_start") {
      last_case = j.value("case", "");
      return j.value("budget_s", opt.hang_timeout_s) * slowdown;
    }
    return opt.hang_timeout_s * slowdown;
  });
  if (verdict.is_null() || ex.hung) {
    verdict = {{"type", "verdict"},
               {"arm", name},
               {"verdict", ex.hung ? "hung" : "crashed"},
               {"check", ex.hung ? "hang" : "crash"},
               {"case", last_case},
               {"detail", "worker " + ex.describe() +
                              (last_case.empty() ? "" : " during case " + last_case)}};
    if (!pass.empty()) verdict["pass"] = pass;
    record(verdict);
  }
  verdict["exit_code"] = ex.exit_code;
  return verdict;
}

// The error count and first error of a compute-sanitizer log.
json read_sanitizer_log(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, first;
  long errors = -1;
  static const std::regex summary(R"(ERROR SUMMARY:\s+(\d+) error)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, summary)) errors = std::stol(m[1]);
    if (first.empty() && line.find("=========") == 0 &&
        line.find("ERROR SUMMARY") == std::string::npos &&
        (line.find("Invalid") != std::string::npos || line.find("Race") != std::string::npos ||
         line.find("Uninitialized") != std::string::npos ||
         line.find("Barrier") != std::string::npos || line.find("error") != std::string::npos ||
         line.find("Error") != std::string::npos))
      first = line.substr(10);
  }
  return {{"errors", errors}, {"first", first}};
}

}  // namespace

std::filesystem::path find_compute_sanitizer() {
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty() && std::filesystem::exists(std::filesystem::path(d) / "compute-sanitizer"))
        return std::filesystem::path(d) / "compute-sanitizer";
  }
  if (std::filesystem::exists("/usr/local/cuda/bin/compute-sanitizer"))
    return "/usr/local/cuda/bin/compute-sanitizer";
  return {};
}

std::vector<json> qualify_stage(const std::vector<StageArm>& arms, const QualifyStageOptions& opt) {
  JsonLinesWriter out(opt.out_jsonl);
  std::vector<json> verdicts;
  std::string no_cuda_reason;
  const bool cuda_ok = cuda_usable(&no_cuda_reason);
  auto record = [&](const json& j) {
    out.write(j);
    if (opt.on_record) opt.on_record(j);
  };

  for (const StageArm& a : arms) {
    const std::string& name = a.identity.name;
    if (a.identity.device == Device::cuda && !cuda_ok) {
      json v = {
          {"type", "verdict"}, {"arm", name}, {"verdict", "skipped"}, {"detail", no_cuda_reason}};
      record(v);
      verdicts.push_back(v);
      continue;
    }
    json verdict = run_worker(a, opt, {}, "", opt.quick, opt.log_dir / ("qualify-" + name + ".log"),
                              record, 1.0);
    verdict.erase("exit_code");

    const bool sanitize = a.identity.device == Device::cuda && !opt.sanitize_tools.empty() &&
                          verdict.value("verdict", "") != "unsupported";
    if (sanitize) {
      json findings = json::array();
      for (const std::string& tool : opt.sanitize_tools) {
        const auto log = opt.log_dir / ("sanitizer-" + tool + "-" + name + ".log");
        std::filesystem::remove(log);
        std::vector<std::string> prefix = {opt.sanitizer.string(),
                                           "--tool",
                                           tool,
                                           "--log-file",
                                           log.string(),
                                           "--error-exitcode",
                                           "86",
                                           "--print-limit",
                                           "20",
                                           "--target-processes",
                                           "all"};
        // Sanitizers slow kernels by 10 to 100 times: give the worker that much more time.
        json v = run_worker(a, opt, prefix, tool, true,
                            opt.log_dir / ("qualify-" + tool + "-" + name + ".log"), record, 20.0);
        json s = read_sanitizer_log(log);
        s["type"] = "sanitizer";
        s["arm"] = name;
        s["tool"] = tool;
        s["log"] = log.filename().string();
        s["verdict_under_tool"] = v.value("verdict", "");
        if (s["errors"].get<long>() < 0 && v.value("exit_code", -1) == 86) s["errors"] = 1;
        record(s);
        if (s["errors"].get<long>() > 0) findings.push_back(s);
      }
      if (!findings.empty() && verdict.value("verdict", "") == "qualified") {
        const json& f = findings[0];
        verdict = {
            {"type", "verdict"},
            {"arm", name},
            {"verdict", "rejected"},
            {"check", "sanitizer_" + f.value("tool", "")},
            {"counts", verdict.value("counts", json::object())},
            {"detail", f.value("tool", "") + " found " + std::to_string(f.value("errors", 0L)) +
                           " error(s): " + f.value("first", "")}};
        record(verdict);
      }
    }
    verdicts.push_back(verdict);
  }
  return verdicts;
}

}  // namespace kq
