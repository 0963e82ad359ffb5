// kq selftest: every good arm and every known-broken candidate through qualification on every
// shipped spec, then what qualified through a brief timing at one size (the timing checks). It
// passes only when each broken candidate is rejected by the check it declares wherever it runs,
// and each good arm qualifies, passes the timing checks and is not flagged wherever it runs.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>

#include "artifacts/artifacts.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "decision/decide.hpp"
#include "device/device_info.hpp"
#include "qualify/expectation.hpp"
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

std::filesystem::path default_specs_dir() {
  const auto exe = self_executable().parent_path();
  for (const auto& d :
       {std::filesystem::path("specs"), exe / ".." / "specs", exe / ".." / ".." / "specs"})
    if (std::filesystem::is_directory(d)) return d;
  throw UsageError(
      "no specs folder found (looked in ./specs and beside the kq binary); give --specs DIR");
}

// The size the selftest times: the spec's largest timing size up to 2^20 elements (its smallest
// when all are larger).
std::int64_t selftest_timing_size(const Spec& spec) {
  std::int64_t best = 0, smallest = 0;
  for (std::int64_t n : spec.timing.sizes) {
    if (n <= (std::int64_t{1} << 20)) best = std::max(best, n);
    smallest = smallest == 0 ? n : std::min(smallest, n);
  }
  return best > 0 ? best : (smallest > 0 ? smallest : 65536);
}

// Per arm across specs.
struct Tally {
  const StageArm* arm = nullptr;
  int ran = 0;  // specs on which it was neither unsupported nor skipped
  int as_expected = 0;
  std::string first_problem;
  std::string skipped_reason;
};

}  // namespace

int cmd_selftest(const std::vector<std::string>& args) {
  po::options_description opts("selftest options");
  opts.add_options()("specs", po::value<std::string>(),
                     "the folder of specs (default: the shipped specs/)")(
      "out", po::value<std::string>()->default_value(""),
      "write the selftest here instead of RUNS_DIR/<id>")(
      "runs-dir", po::value<std::string>()->default_value("runs"), "where run directories go")(
      "quick", po::bool_switch(), "qualify on the smaller sizes only")(
      "hang-timeout", po::value<double>()->default_value(30.0),
      "seconds a case may run silently before its worker is declared hung (the hanging candidates "
      "cost this much each)")("sanitize", po::value<std::string>()->implicit_value("memcheck"),
                              "also run CUDA arms under compute-sanitizer tools (comma-separated)")(
      "jobs,j", po::value<int>()->default_value(default_qualify_jobs()),
      "arms qualified at once, each in its own worker")(
      "no-timing", po::bool_switch(),
      "qualify only: skip the brief timing that runs the timing checks on every qualified arm");
  add_plugin_options(opts);
  po::variables_map vm;
  if (!parse_subcommand("kq selftest [--specs DIR] [--quick] [options]", opts, {}, args, vm))
    return kOk;

  check_qualify_options(vm);
  const std::filesystem::path specs_dir = vm.count("specs")
                                              ? std::filesystem::path(vm["specs"].as<std::string>())
                                              : default_specs_dir();
  if (!std::filesystem::is_directory(specs_dir))
    throw UsageError("--specs: " + specs_dir.string() + " is not a folder");
  std::vector<std::filesystem::path> spec_files;
  for (const auto& e : std::filesystem::directory_iterator(specs_dir))
    if (e.path().extension() == ".yaml") spec_files.push_back(e.path());
  std::sort(spec_files.begin(), spec_files.end());
  if (spec_files.empty()) throw UsageError("no .yaml specs in " + specs_dir.string());
  std::vector<Spec> specs;
  for (const auto& f : spec_files) specs.push_back(load_spec(f));

  PluginSet set = load_plugins_from(vm, true);
  std::vector<StageArm> arms;
  for (const auto& a : set.arms) arms.push_back({a.identity, a.plugin_file});
  if (arms.empty()) throw UsageError("no arms found (kq list shows where kq looked)");

  const nlohmann::json machine = machine_info();
  const auto top = make_run_dir(vm, "selftest", machine_short_name(machine));
  std::cout << "kq selftest: " << arms.size() << " arms on " << specs.size() << " specs -> "
            << top.string() << "\n";

  std::vector<std::string> tools;
  std::filesystem::path sanitizer;
  if (vm.count("sanitize")) {
    tools = parse_sanitize_tools(vm["sanitize"].as<std::string>());
    sanitizer = find_compute_sanitizer();
    if (sanitizer.empty()) tools.clear();
  }

  std::map<std::string, Tally> tally;
  for (const auto& a : arms) tally[a.identity.name].arm = &a;
  Progress progress;
  for (const Spec& spec : specs) {
    const auto dir = top / std::filesystem::path(spec.path).stem();
    std::filesystem::create_directories(dir / "logs");
    std::vector<std::string> command = {"kq", "selftest"};
    command.insert(command.end(), args.begin(), args.end());
    start_run_dir(dir, spec, arms, set.errors, machine, command);
    std::cout << spec.op.op << " (" << spec.path << ")\n";
    auto q = QualifyStageOptions::for_run_dir(dir);
    q.quick = vm["quick"].as<bool>();
    q.hang_timeout_s = vm["hang-timeout"].as<double>();
    q.jobs = vm["jobs"].as<int>();
    q.sanitize_tools = tools;
    q.sanitizer = sanitizer;
    q.on_record = [&](const nlohmann::json& j) {
      const std::string v = j.value("verdict", "");
      if (j.value("type", "") == "verdict" && (v == "unsupported" || v == "skipped")) return;
      progress.record(j);
    };
    auto verdicts = qualify_stage(arms, q);
    for (const auto& a : arms) finish_artifacts(dir / "artifacts" / a.identity.name);
    // What qualified is timed briefly at one size, so that the timing checks (outputs of timed
    // samples and graph replays, stream discipline, plausibility) meet every arm too.
    std::vector<StageArm> qualified;
    for (std::size_t i = 0; i < arms.size(); ++i)
      if (verdicts[i].value("verdict", "") == "qualified") qualified.push_back(arms[i]);
    if (!qualified.empty() && !vm["no-timing"].as<bool>()) {
      TimeStageOptions t;
      t.spec_file = dir / "spec.yaml";
      t.out_jsonl = dir / "rounds.jsonl";
      t.log_file = dir / "logs" / "time.log";
      t.sizes = {selftest_timing_size(spec)};
      t.brief = true;
      t.on_record = [&](const nlohmann::json& j) { progress.record(j); };
      if (auto res = time_stage(qualified, t); !res.completed)
        std::cout << "  timing stopped early: " << res.problem << " (see " << t.log_file.string()
                  << ")\n";
    }
    progress.finish();
    const nlohmann::json summary = write_report(dir);
    std::map<std::string, nlohmann::json> judged;  // verdicts after timing, flags
    for (const auto& a : summary["arms"]) judged[a.value("name", "")] = a;
    std::map<std::string, std::string> flagged;
    for (const auto& f : summary.value("flags", nlohmann::json::array()))
      flagged.emplace(instance_arm(f.value("arm", "")), f.value("message", ""));
    for (std::size_t i = 0; i < arms.size(); ++i) {
      Tally& t = tally[arms[i].identity.name];
      if (auto j = judged.find(arms[i].identity.name); j != judged.end()) verdicts[i] = j->second;
      std::string v = verdicts[i].value("verdict", "");
      if (auto f = flagged.find(arms[i].identity.name); f != flagged.end() && v == "qualified") {
        v = "flagged";
        verdicts[i]["detail"] = f->second;
      }
      if (v == "unsupported") continue;
      if (v == "skipped") {
        t.skipped_reason = verdicts[i].value("detail", "");
        continue;
      }
      ++t.ran;
      const bool broken = known_broken(arms[i].identity);
      const bool ok = broken ? caught_as_declared(v, verdicts[i].value("check", ""),
                                                  arms[i].identity.expected_rejection)
                             : v == "qualified";
      if (ok) {
        ++t.as_expected;
      } else if (t.first_problem.empty()) {
        t.first_problem =
            spec.op.op + ": " + v +
            (verdicts[i].value("check", "").empty() ? ""
                                                    : " by " + verdicts[i].value("check", "")) +
            (broken ? " (declared " + arms[i].identity.expected_rejection + ")" : "") +
            (verdicts[i].value("detail", "").empty() ? "" : ": " + verdicts[i].value("detail", ""));
      }
    }
  }

  int b_total = 0, b_ok = 0, g_total = 0, g_ok = 0;
  nlohmann::json out = nlohmann::json::array();
  std::cout << "\n";
  for (const auto& a : arms) {
    const Tally& t = tally[a.identity.name];
    const bool broken = known_broken(a.identity);
    std::string outcome;
    bool counted = true, ok = false;
    if (t.ran == 0 && !t.skipped_reason.empty()) {
      outcome = "skipped: " + t.skipped_reason;
      counted = false;
    } else if (t.ran == 0) {
      outcome = broken ? "supports none of the specs (a broken candidate must claim one)"
                       : "supports none of the specs";
      counted = broken;
    } else {
      ok = t.as_expected == t.ran;
      outcome = ok ? (broken ? "rejected as declared (" + a.identity.expected_rejection + ") on "
                             : "qualified on ") +
                         std::to_string(t.ran) + " spec(s)"
                   : t.first_problem;
    }
    if (counted) (broken ? b_total : g_total)++;
    if (counted && ok) (broken ? b_ok : g_ok)++;
    std::cout << (counted ? (ok ? "  ok    " : "  FAIL  ") : "  -     ") << std::left
              << std::setw(38) << a.identity.name << " " << outcome << "\n";
    out.push_back({{"arm", a.identity.name},
                   {"family", a.identity.family},
                   {"counted", counted},
                   {"ok", ok},
                   {"ran_on", t.ran},
                   {"outcome", outcome}});
  }
  write_file_atomic(top / "selftest.json", nlohmann::json{{"broken_rejected", b_ok},
                                                          {"broken_total", b_total},
                                                          {"good_qualified", g_ok},
                                                          {"good_total", g_total},
                                                          {"arms", out}}
                                                   .dump(2) +
                                               "\n");
  std::cout << "selftest: " << b_ok << " of " << b_total << " broken candidates rejected, " << g_ok
            << " of " << g_total << " good arms qualified\n";
  return (b_ok == b_total && g_ok == g_total) ? kOk : kCandidateFailed;
}

}  // namespace kq::cli
