// kq run and kq qualify: their options, read into RunPipelineOptions, and the pipeline called
// (pipeline/run_pipeline.hpp: qualify in isolated workers, (run:) time, report and decide).
#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/common.hpp"
#include "device/device_info.hpp"
#include "device/memory.hpp"
#include "pipeline/run_pipeline.hpp"
#include "plan/choose_points.hpp"
#include "qualify/expectation.hpp"
#include "qualify/qualify_stage.hpp"
#include "qualify/sanitize_setup.hpp"
#include "spec/suggest.hpp"
#include "timing/stopping.hpp"

namespace kq::cli {
namespace {

// "--arms: no arm named 'cpu_tbf'; did you mean 'cpu_tbb'? ...": the nearest name, if one is a
// likely typo, and where to find them all (a hundred names inline would bury the message).
std::string no_such_arm(const PluginSet& set, const std::string& name) {
  std::vector<std::string_view> names;
  for (const auto& a : set.arms) names.push_back(a.identity.name);
  std::string m = "--arms: no arm named '" + name + "'";
  if (auto near = closest_match(name, names)) m += "; did you mean '" + *near + "'?";
  return m + " (" + std::to_string(names.size()) +
         " arms found in the plugin folders; `kq list` names them)";
}

std::vector<StageArm> select_arms(const PluginSet& set, const po::variables_map& vm) {
  std::vector<StageArm> arms;
  if (vm.count("arms")) {
    for (const auto& n : split_csv(vm["arms"].as<std::string>())) {
      auto it = std::find_if(set.arms.begin(), set.arms.end(),
                             [&](const LoadedArm& a) { return a.identity.name == n; });
      if (it == set.arms.end()) throw UsageError(no_such_arm(set, n));
      arms.push_back({it->identity, it->plugin_file, it->load_threads});
    }
    return arms;
  }
  const bool broken = vm["include-broken"].as<bool>();
  for (const auto& a : set.arms)
    if (broken || !known_broken(a.identity))
      arms.push_back({a.identity, a.plugin_file, a.load_threads});
  return arms;
}

// kq run --quick on a GPU host, a first look, runs the CUDA arms only (unless --arms names arms
// or --include-cpu is given): a CPU arm is never a candidate beside them, and torch.compile's
// CPU build alone takes about a minute. The arms left out are named at the start.
std::vector<std::string> leave_out_cpu_arms(std::vector<StageArm>& arms) {
  const auto cpu = [](const StageArm& a) { return a.identity.device == Device::cpu; };
  if (std::all_of(arms.begin(), arms.end(), cpu) || !cuda_usable(nullptr)) return {};
  std::vector<std::string> names;
  for (const StageArm& a : arms)
    if (cpu(a)) names.push_back(a.identity.name);
  std::erase_if(arms, cpu);
  return names;
}

// --early-timing: by default where the workers beside qualification have cores to run on (the
// warm calls compile on the host); on a small machine they would slow qualification as much.
// --devices: the GPUs the run uses (every one it sees by default), and in the manifest's machine
// facts which they were and which one timed.
std::vector<GpuSlot> chosen_gpus(const po::variables_map& vm, nlohmann::json& machine) {
  std::vector<GpuSlot> gpus = devices_option(vm);
  if (gpus.empty()) return gpus;
  machine["devices"] = nlohmann::json::array();
  for (const GpuSlot& g : gpus) machine["devices"].push_back(describe(g));
  machine["timing_gpu"] = describe(gpus.front());
  return gpus;
}

bool early_timing(const std::string& choice) {
  if (choice == "on") return true;
  if (choice == "off") return false;
  if (choice != "auto")
    throw UsageError("--early-timing: give 'on', 'off' or 'auto', not '" + choice + "'");
  return std::thread::hardware_concurrency() >= 8;
}

// --sizes (format 1) or --points (any spec): what is timed, and so qualified. Points the spec
// does not list are added to its timing points here, as the workers add them.
TimingChoice choose_timed(const po::variables_map& vm, Spec& spec) {
  const bool sizes = vm.count("sizes") > 0, points = vm.count("points") > 0;
  if (sizes && points)
    throw UsageError("give --sizes or --points, not both (--points takes sizes)");
  if (sizes && spec.shaped)
    throw UsageError("--sizes times one-dim specs; " + spec.path +
                     " is a format-2 spec, timed at its timing points: choose them with --points "
                     "(their numbers, 1,2, or dim values, '" +
                     example_point(spec) + "')");
  TimingChoice c;
  if (sizes) c.keys = parse_sizes(vm["sizes"].as<std::string>());
  try {
    if (points) c = choose_points(spec, vm["points"].as<std::vector<std::string>>());
  } catch (const PointsError& e) {
    throw UsageError(e.what());
  }
  add_timing_points(spec, c.added);
  return c;
}

int run_pipeline(const std::vector<std::string>& args, bool timing) {
  const std::string cmd = timing ? "run" : "qualify";
  po::options_description opts(cmd + " options");
  opts.add_options()("spec", po::value<std::string>()->required(), "the spec file")(
      "arms", po::value<std::string>(),
      "only these arms, comma-separated (default: every arm but broken ones)")(
      "include-broken", po::bool_switch(),
      "also run the known-broken candidates (the broken family and any arm that declares the check "
      "that must reject it)")("include-cpu", po::bool_switch(),
                              "with --quick on a machine with a GPU, also run the CPU arms (left "
                              "out by default: never candidates beside CUDA arms)")(
      "out", po::value<std::string>()->default_value(""),
      "write the run here instead of RUNS_DIR/<id>")(
      "runs-dir", po::value<std::string>()->default_value("runs"), "where run directories go")(
      "quick", po::bool_switch(),
      "qualify on the smaller sizes only (up to 2^20 + 3 elements) and, kq run, time briefly (at "
      "most 50 rounds and 5 s a size): a first look")(
      "sanitize", po::value<std::string>()->implicit_value("all"),
      "also qualify each CUDA arm under compute-sanitizer: memcheck, initcheck, racecheck, "
      "synccheck (comma-separated; default all)")("junit", po::value<std::string>(),
                                                  "also write the verdicts as JUnit XML to FILE")(
      "hang-timeout", po::value<double>(),
      "seconds a case may run silently before its worker is declared hung (default: the spec's)")(
      "jobs,j", po::value<int>()->default_value(default_qualify_jobs()),
      "arms qualified at once, each in its own worker (timing is always one arm at a time)")(
      "devices", po::value<std::string>(),
      "the GPUs to use: their numbers (0,1) or all (default: every GPU this process sees); "
      "qualification's CUDA workers are spread over them, the timing runs on the first")(
      "points", po::value<std::vector<std::string>>()->composing(),
      timing ? "time (and qualify) these points instead of the spec's: timing-point numbers "
               "(1,3), or dim values ('{M: 32768, N: 4096}', repeatable; points the spec lacks "
               "are added); for a format-1 spec, sizes (4096,2^20 or '{n: 4096}')"
             : "qualify at these timing points instead of the spec's, as kq run --points times "
               "them");
  if (timing)
    opts.add_options()("no-timing", po::bool_switch(), "qualify only")(
        "twice", po::value<std::string>(),
        "time this qualified arm a second time, as an independent instance named ARM#2: how far "
        "the timing agrees with itself")(
        "sizes", po::value<std::string>(),
        "time (and qualify) these sizes instead of the spec's (e.g. 4096,2^20)")(
        "no-blocking-kernel", po::bool_switch(),
        "time CUDA samples without holding the stream while they are enqueued (each sample "
        "then includes whatever part of the host's enqueue the GPU waits for)")(
        "cpu-budget", po::value<double>()->default_value(50.0),
        "where CUDA arms are timed, time CPU arms only at sizes whose call is expected within "
        "this many milliseconds (0: at every size); the sizes left out are listed")(
        "isolate", po::value<std::string>()->default_value("outside"),
        "which arms are timed in a worker of their own, beside the baseline, the eager arm and "
        "the controls: 'outside' (each file from outside kq's install, and each known-broken "
        "candidate's) or 'all' (every file)")(
        "early-timing", po::value<std::string>()->default_value("auto"),
        "start the timing worker of kq's own arms beside qualification, to make their first "
        "calls (compiles, plan searches) while they qualify: 'on', 'off' or 'auto' (on where "
        "the machine has 8 cores or more)");
  add_plugin_options(opts);
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  if (!parse_subcommand("kq " + cmd + " SPEC [--arms A,B] [--out DIR] [options]", opts, pos, args,
                        vm))
    return kOk;

  check_qualify_options(vm);
  RunPipelineOptions o;
  o.command = cmd;
  o.timing = timing;
  o.sanitize =
      set_up_sanitize(vm.count("sanitize") ? parse_sanitize_tools(vm["sanitize"].as<std::string>())
                                           : std::vector<std::string>{},
                      std::cout);
  o.spec = load_spec(vm["spec"].as<std::string>());
  o.timed = choose_timed(vm, o.spec);
  PluginSet set = load_plugins_from(vm, true);
  o.arms = select_arms(set, vm);
  if (o.arms.empty()) throw UsageError("no arms to run (kq list shows what was found)");
  o.load_errors = set.errors;
  o.plugin_environment = set.environments;

  o.machine = machine_info();
  o.dir = make_run_dir(vm, o.spec.op.op, machine_short_name(o.machine));
  o.command_line = {"kq", cmd};
  o.command_line.insert(o.command_line.end(), args.begin(), args.end());
  o.quick = vm["quick"].as<bool>();
  if (o.quick && !vm.count("arms") && !vm["include-cpu"].as<bool>())
    o.left_out_cpu = leave_out_cpu_arms(o.arms);
  if (o.quick && timing) quick_timing(o.spec.timing);  // as the timing workers will
  if (vm.count("hang-timeout")) o.hang_timeout_s = vm["hang-timeout"].as<double>();
  o.jobs = vm["jobs"].as<int>();
  o.gpus = chosen_gpus(vm, o.machine);
  if (vm.count("junit")) o.junit = vm["junit"].as<std::string>();
  if (timing) {
    o.no_timing = vm["no-timing"].as<bool>();
    if (vm.count("twice")) o.twice = vm["twice"].as<std::string>();
    o.blocking_kernel = !vm["no-blocking-kernel"].as<bool>();
    o.cpu_call_budget_s = vm["cpu-budget"].as<double>() * 1e-3;
    if (o.cpu_call_budget_s < 0) throw UsageError("--cpu-budget must be 0 or more milliseconds");
    const std::string isolate = vm["isolate"].as<std::string>();
    if (isolate != "outside" && isolate != "all")
      throw UsageError("--isolate: give 'outside' or 'all', not '" + isolate + "'");
    o.isolate_all = isolate == "all";
    o.early_timing = early_timing(vm["early-timing"].as<std::string>());
  }
  return run_pipeline(o).candidate_failed ? kCandidateFailed : kOk;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) { return run_pipeline(args, true); }
int cmd_qualify(const std::vector<std::string>& args) { return run_pipeline(args, false); }

}  // namespace kq::cli
