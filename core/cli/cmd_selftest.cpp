// kq selftest: its options, read into SelftestOptions, and the selftest called
// (pipeline/selftest.hpp: every arm qualified on every spec, then timed briefly).
#include <algorithm>
#include <iostream>

#include "cli/common.hpp"
#include "device/device_info.hpp"
#include "pipeline/selftest.hpp"
#include "qualify/qualify_stage.hpp"
#include "qualify/sanitize_setup.hpp"
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
      "qualify only: skip the brief timing that runs the timing checks on every qualified arm")(
      "sizes", po::value<std::string>(),
      "time (and qualify) these sizes on every spec, as kq run --sizes does, instead of the "
      "brief timing at one size (e.g. 2^20,2^24,2^28)");
  add_plugin_options(opts);
  po::variables_map vm;
  if (!parse_subcommand("kq selftest [--specs DIR] [--quick] [options]", opts, {}, args, vm))
    return kOk;

  check_qualify_options(vm);
  SelftestOptions o;
  o.sanitize =
      set_up_sanitize(vm.count("sanitize") ? parse_sanitize_tools(vm["sanitize"].as<std::string>())
                                           : std::vector<std::string>{},
                      std::cout);
  o.shipped_specs = vm.count("specs") == 0;
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
  for (const auto& f : spec_files) o.specs.push_back(load_spec(f));

  PluginSet set = load_plugins_from(vm, true);
  for (const auto& a : set.arms) o.arms.push_back({a.identity, a.plugin_file, a.load_threads});
  if (o.arms.empty()) throw UsageError("no arms found (kq list shows where kq looked)");
  o.load_errors = set.errors;
  o.plugin_environment = set.environments;

  o.machine = machine_info();
  o.dir = make_run_dir(vm, "selftest", machine_short_name(o.machine));
  o.command_line = {"kq", "selftest"};
  o.command_line.insert(o.command_line.end(), args.begin(), args.end());
  o.quick = vm["quick"].as<bool>();
  o.hang_timeout_s = vm["hang-timeout"].as<double>();
  o.jobs = vm["jobs"].as<int>();
  o.no_timing = vm["no-timing"].as<bool>();
  if (vm.count("sizes")) o.sizes = parse_sizes(vm["sizes"].as<std::string>());
  return selftest(o).passed() ? kOk : kCandidateFailed;
}

}  // namespace kq::cli
