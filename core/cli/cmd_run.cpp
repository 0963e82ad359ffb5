// kq run and kq qualify: plan, qualify in isolated workers, (run:) time the qualified arms,
// then report and decide. Each stage is called here; none of them is implemented here.
#include <algorithm>
#include <iostream>

#include "artifacts/artifacts.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "device/device_info.hpp"
#include "qualify/expectation.hpp"
#include "qualify/qualify_stage.hpp"
#include "report/report.hpp"
#include "rundir/manifest.hpp"
#include "rundir/run_dir.hpp"
#include "spec/spec.hpp"
#include "timing/time_stage.hpp"
#include "util/json_lines.hpp"

namespace kq::cli {
namespace {

std::vector<StageArm> select_arms(const PluginSet& set, const po::variables_map& vm) {
  std::vector<StageArm> arms;
  if (vm.count("arms")) {
    for (const auto& n : split_csv(vm["arms"].as<std::string>())) {
      auto it = std::find_if(set.arms.begin(), set.arms.end(),
                             [&](const LoadedArm& a) { return a.identity.name == n; });
      if (it == set.arms.end()) {
        std::string known;
        for (const auto& a : set.arms) known += (known.empty() ? "" : ", ") + a.identity.name;
        throw UsageError("--arms: no arm named '" + n + "' (found: " + known + ")");
      }
      arms.push_back({it->identity, it->plugin_file});
    }
    return arms;
  }
  const bool broken = vm["include-broken"].as<bool>();
  for (const auto& a : set.arms)
    if (broken || !known_broken(a.identity)) arms.push_back({a.identity, a.plugin_file});
  return arms;
}

int run_pipeline(const std::vector<std::string>& args, bool timing) {
  const std::string cmd = timing ? "run" : "qualify";
  po::options_description opts(cmd + " options");
  opts.add_options()("spec", po::value<std::string>()->required(), "the spec file")(
      "arms", po::value<std::string>(),
      "only these arms, comma-separated (default: every arm but broken ones)")(
      "include-broken", po::bool_switch(),
      "also run the known-broken candidates (the broken family and any arm that declares the check "
      "that must reject it)")("out", po::value<std::string>()->default_value(""),
                              "write the run here instead of RUNS_DIR/<id>")(
      "runs-dir", po::value<std::string>()->default_value("runs"), "where run directories go")(
      "quick", po::bool_switch(), "qualify on the smaller sizes only (up to 2^20 + 3 elements)")(
      "sanitize", po::value<std::string>()->implicit_value("all"),
      "also qualify each CUDA arm under compute-sanitizer: memcheck, initcheck, racecheck, "
      "synccheck (comma-separated; default all)")("junit", po::value<std::string>(),
                                                  "also write the verdicts as JUnit XML to FILE")(
      "hang-timeout", po::value<double>(),
      "seconds a case may run silently before its worker is declared hung (default: the spec's)")(
      "jobs,j", po::value<int>()->default_value(default_qualify_jobs()),
      "arms qualified at once, each in its own worker (timing is always one arm at a time)");
  if (timing)
    opts.add_options()("no-timing", po::bool_switch(), "qualify only")(
        "twice", po::value<std::string>(),
        "time this qualified arm a second time, as an independent instance named ARM#2: how far "
        "the timing agrees with itself")(
        "sizes", po::value<std::string>(),
        "time (and qualify) these sizes instead of the spec's (e.g. 4096,2^20)")(
        "no-blocking-kernel", po::bool_switch(),
        "time CUDA samples without holding the stream while they are enqueued (each sample "
        "then includes whatever part of the host's enqueue the GPU waits for)");
  add_plugin_options(opts);
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  if (!parse_subcommand("kq " + cmd + " SPEC [--arms A,B] [--out DIR] [options]", opts, pos, args,
                        vm))
    return kOk;

  check_qualify_options(vm);
  std::vector<std::int64_t> sizes;
  if (timing && vm.count("sizes")) sizes = parse_sizes(vm["sizes"].as<std::string>());
  std::vector<std::string> tools;
  std::filesystem::path sanitizer;
  if (vm.count("sanitize")) {
    tools = parse_sanitize_tools(vm["sanitize"].as<std::string>());
    sanitizer = find_compute_sanitizer();
    if (sanitizer.empty()) {
      std::cout << "kq: --sanitize: compute-sanitizer is not on PATH; qualifying without it\n";
      tools.clear();
    }
  }
  Spec spec = load_spec(vm["spec"].as<std::string>());
  PluginSet set = load_plugins_from(vm, true);
  std::vector<StageArm> arms = select_arms(set, vm);
  if (arms.empty()) throw UsageError("no arms to run (kq list shows what was found)");

  const nlohmann::json machine = machine_info();
  const auto dir = make_run_dir(vm, spec.op.op, machine_short_name(machine));
  std::vector<std::string> command = {"kq", cmd};
  command.insert(command.end(), args.begin(), args.end());
  start_run_dir(dir, spec, arms, set.errors, machine, command);
  std::cout << "kq " << cmd << " " << spec.op.op << " -> " << dir.string() << "\n";

  Progress progress;
  std::cout << "qualifying " << arms.size() << " arm(s)\n";
  auto q = QualifyStageOptions::for_run_dir(dir);
  q.quick = vm["quick"].as<bool>();
  q.timing_sizes = sizes;  // the sizes timed are qualified too
  q.hang_timeout_s = vm.count("hang-timeout") ? vm["hang-timeout"].as<double>()
                                              : spec.qualification.hang_timeout_s;
  q.jobs = vm["jobs"].as<int>();
  q.sanitize_tools = tools;
  q.sanitizer = sanitizer;
  q.on_record = [&](const nlohmann::json& j) { progress.record(j); };
  auto verdicts = qualify_stage(arms, q);
  for (const auto& a : arms) finish_artifacts(dir / "artifacts" / a.identity.name);

  bool candidate_failed = false;
  std::vector<StageArm> qualified;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const std::string v = verdicts[i].value("verdict", "");
    if (v == "qualified") qualified.push_back(arms[i]);
    if (v == "rejected" || v == "crashed" || v == "hung") candidate_failed = true;
  }

  if (timing && vm.count("twice")) {
    const std::string twice = vm["twice"].as<std::string>();
    auto it = std::find_if(qualified.begin(), qualified.end(),
                           [&](const StageArm& a) { return a.identity.name == twice; });
    if (it == qualified.end()) {
      std::cout << "  --twice " << twice << ": not a qualified arm of this run; timed once\n";
    } else {
      StageArm copy = *it;
      copy.identity.name += "#2";
      qualified.push_back(copy);
    }
  }
  if (timing && !vm["no-timing"].as<bool>() && !qualified.empty()) {
    std::cout << "timing " << qualified.size() << " qualified arm(s)\n";
    TimeStageOptions t;
    t.spec_file = dir / "spec.yaml";
    t.out_jsonl = dir / "rounds.jsonl";
    t.log_file = dir / "logs" / "time.log";
    t.on_record = [&](const nlohmann::json& j) { progress.record(j); };
    t.sizes = sizes;
    t.blocking_kernel = !vm["no-blocking-kernel"].as<bool>();
    t.artifacts_dir = dir / "artifacts";
    auto res = time_stage(qualified, t);
    for (const auto& a : qualified) finish_artifacts(dir / "artifacts" / a.identity.name);
    if (!res.completed) {
      // What was measured stays in the run directory; the run as a whole did not complete.
      std::cout << "  timing stopped early: " << res.problem << " (see logs/time.log)\n";
      candidate_failed = true;
    }
  }
  progress.finish();

  auto summary = write_report(dir);
  for (const auto& row : summary["timing"])
    for (const auto& a : row["arms"])
      if (!a.value("recheck_ok", true)) candidate_failed = true;
  for (const auto& a : summary["arms"])
    if (a.value("rejected_while_timed", false)) {
      candidate_failed = true;
      std::cout << "  " << a.value("name", "") << ": rejected while timed (" << a.value("check", "")
                << "): " << a.value("detail", "") << "\n";
    }
  if (vm.count("junit"))
    std::filesystem::copy_file(dir / "junit.xml", vm["junit"].as<std::string>(),
                               std::filesystem::copy_options::overwrite_existing);
  const auto& h = summary["headline"];
  std::cout << "\n"
            << h.value("in_contract_cases_passed", 0) << " of " << h.value("in_contract_cases", 0)
            << " in-contract cases passed, " << h.value("out_of_contract_refused", 0) << " of "
            << h.value("out_of_contract_cases", 0) << " out-of-contract inputs refused\n";
  if (timing) std::cout << summary["decision"].value("sentence", "") << "\n";
  std::cout << "report: " << (dir / "report.md").string() << ", " << (dir / "report.html").string()
            << "\n";
  return candidate_failed ? kCandidateFailed : kOk;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) { return run_pipeline(args, true); }
int cmd_qualify(const std::vector<std::string>& args) { return run_pipeline(args, false); }

}  // namespace kq::cli
