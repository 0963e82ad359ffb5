#include <fstream>
#include <iostream>

#include "cli/common.hpp"
#include "device/device_info.hpp"
#include "qualify/qualify_stage.hpp"
#include "report/report.hpp"
#include "rundir/manifest.hpp"
#include "rundir/run_dir.hpp"
#include "spec/spec.hpp"
#include "timing/time_stage.hpp"
#include "util/json_lines.hpp"
#include "worker/supervise.hpp"

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
    if (broken || a.identity.family != "broken") arms.push_back({a.identity, a.plugin_file});
  return arms;
}

void print_record(const nlohmann::json& j) {
  const std::string type = j.value("type", "");
  if (type == "verdict") {
    std::cout << "  " << j.value("arm", "") << ": " << j.value("verdict", "");
    if (j.contains("counts"))
      std::cout << " (" << j["counts"].value("passed", 0) << " passed, "
                << j["counts"].value("refused", 0) << " refused, " << j["counts"].value("failed", 0)
                << " failed, " << j["counts"].value("skipped", 0) << " skipped)";
    if (!j.value("detail", "").empty()) std::cout << ": " << j.value("detail", "");
    std::cout << std::endl;
  } else if (type == "size_end") {
    std::cout << "  " << j.value("size", 0LL) << " elements: " << j.value("rounds", 0)
              << " rounds, stopped by " << j.value("stopped_by", "") << std::endl;
  } else if (type == "arm_skip") {
    std::cout << "  " << j.value("arm", "") << " not timed at " << j.value("size", 0LL) << ": "
              << j.value("reason", "") << std::endl;
  }
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("run options");
  opts.add_options()("spec", po::value<std::string>()->required(), "the spec file")(
      "arms", po::value<std::string>(),
      "only these arms, comma-separated (default: every arm but broken ones)")(
      "include-broken", po::bool_switch(), "also run the known-broken candidates")(
      "out", po::value<std::string>()->default_value(""),
      "write the run here instead of RUNS_DIR/<id>")(
      "runs-dir", po::value<std::string>()->default_value("runs"), "where run directories go")(
      "quick", po::bool_switch(), "qualify on the smaller sizes only")(
      "no-timing", po::bool_switch(), "qualify only")(
      "sizes", po::value<std::string>(), "time these sizes instead of the spec's (e.g. 4096,2^20)");
  add_plugin_options(opts);
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  if (!parse_subcommand("kq run SPEC [--arms A,B] [--out DIR] [options]", opts, pos, args, vm))
    return kOk;

  std::vector<std::int64_t> sizes;
  if (vm.count("sizes")) sizes = parse_sizes(vm["sizes"].as<std::string>());
  Spec spec = load_spec(vm["spec"].as<std::string>());
  PluginSet set = load_plugins_from(vm, true);
  std::vector<StageArm> arms = select_arms(set, vm);
  if (arms.empty()) throw UsageError("no arms to run (kq list shows what was found)");

  const nlohmann::json machine = machine_info();
  const auto dir = create_run_dir(vm["runs-dir"].as<std::string>(), vm["out"].as<std::string>(),
                                  spec.op.op, machine_short_name(machine));
  write_file_atomic(dir / "spec.yaml", spec.text);
  std::vector<std::string> command = {"kq", "run"};
  command.insert(command.end(), args.begin(), args.end());
  write_file_atomic(dir / "manifest.json",
                    build_manifest(spec, arms, set.errors, machine, command).dump(2) + "\n");
  std::cout << "kq run " << spec.op.op << " -> " << dir.string() << "\n";

  std::cout << "qualifying " << arms.size() << " arm(s)\n";
  QualifyStageOptions q;
  q.spec_file = dir / "spec.yaml";
  q.out_jsonl = dir / "qualification.jsonl";
  q.log_dir = dir / "logs";
  q.quick = vm["quick"].as<bool>();
  q.hang_timeout_s = spec.qualification.hang_timeout_s;
  q.on_record = print_record;
  auto verdicts = qualify_stage(arms, q);

  bool candidate_failed = false;
  std::vector<StageArm> qualified;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const std::string v = verdicts[i].value("verdict", "");
    if (v == "qualified") qualified.push_back(arms[i]);
    if (v == "rejected" || v == "crashed" || v == "hung") candidate_failed = true;
  }

  if (!vm["no-timing"].as<bool>() && !qualified.empty()) {
    std::cout << "timing " << qualified.size() << " qualified arm(s)\n";
    TimeStageOptions t;
    t.spec_file = dir / "spec.yaml";
    t.out_jsonl = dir / "rounds.jsonl";
    t.log_file = dir / "logs" / "time.log";
    t.on_record = print_record;
    t.sizes = sizes;
    auto res = time_stage(qualified, t);
    if (!res.completed)
      std::cout << "  timing stopped early: " << res.problem << " (see logs/time.log)\n";
  }

  auto summary = write_report(dir);
  for (const auto& row : summary["timing"])
    for (const auto& a : row["arms"])
      if (!a.value("recheck_ok", true)) candidate_failed = true;
  std::cout << "\n" << summary["decision"].value("sentence", "") << "\n";
  std::cout << "report: " << (dir / "report.md").string() << "\n";
  return candidate_failed ? kCandidateFailed : kOk;
}

}  // namespace kq::cli
