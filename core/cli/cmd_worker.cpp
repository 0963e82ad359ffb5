// Worker modes: the parent kq starts these in child processes and reads their JSON lines, so
// that an arm that crashes, corrupts its CUDA context or hangs takes only its worker down.
#include <iostream>

#include "artifacts/artifacts.hpp"
#include "cli/common.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/qualify_arm.hpp"
#include "spec/spec.hpp"
#include "timing/time_arms.hpp"
#include "worker/supervise.hpp"

namespace kq::cli {
namespace {

LoadedArm* find_arm(PluginSet& set, const std::string& name) {
  for (auto& a : set.arms)
    if (a.identity.name == name) return &a;
  return nullptr;
}

std::string load_errors(const PluginSet& set) {
  std::string s;
  for (const auto& e : set.errors)
    s += (s.empty() ? "" : "; ") + e.file.string() + ": " + e.message;
  return s;
}

}  // namespace

int cmd_worker_qualify(const std::vector<std::string>& args) {
  po::options_description opts("worker options");
  opts.add_options()("spec", po::value<std::string>()->required(), "")(
      "plugin", po::value<std::string>()->required(), "")(
      "arm", po::value<std::string>()->required(), "")("quick", po::bool_switch(), "")(
      "artifacts-dir", po::value<std::string>(), "")("hang-timeout", po::value<double>(), "");
  po::variables_map vm;
  if (!parse_subcommand("kq __worker-qualify (internal)", opts, {}, args, vm)) return kOk;
  auto emit = claim_protocol_stdout();
  const std::string name = vm["arm"].as<std::string>();
  try {
    Spec spec = load_spec(vm["spec"].as<std::string>());
    if (vm.count("hang-timeout"))
      spec.qualification.hang_timeout_s = vm["hang-timeout"].as<double>();
    PluginSet set = load_plugins({{}, {vm["plugin"].as<std::string>()}});
    LoadedArm* arm = find_arm(set, name);
    if (!arm)
      throw std::runtime_error("arm not found in " + vm["plugin"].as<std::string>() + ": " +
                               load_errors(set));
    PlanOptions plan;
    plan.quick = vm["quick"].as<bool>();
    auto verdict = qualify_arm(*arm->arm, arm->identity, spec, plan_cases(spec, plan), emit);
    if (vm.count("artifacts-dir") && verdict.value("verdict", "") != "unsupported" &&
        verdict.value("verdict", "") != "crashed")
      write_arm_artifacts(std::filesystem::path(vm["artifacts-dir"].as<std::string>()) / name,
                          *arm->arm, arm->identity, arm->plugin_file);
  } catch (const std::exception& e) {
    emit({{"type", "verdict"},
          {"arm", name},
          {"verdict", "crashed"},
          {"check", "worker_error"},
          {"detail", std::string("the worker failed: ") + e.what()}});
    return kInternal;
  }
  return kOk;
}

int cmd_worker_time(const std::vector<std::string>& args) {
  po::options_description opts("worker options");
  opts.add_options()("spec", po::value<std::string>()->required(), "")(
      "plugin", po::value<std::vector<std::string>>()->required(), "")(
      "arm", po::value<std::vector<std::string>>()->required(), "")(
      "sizes", po::value<std::string>(), "")("artifacts-dir", po::value<std::string>(), "");
  po::variables_map vm;
  if (!parse_subcommand("kq __worker-time (internal)", opts, {}, args, vm)) return kOk;
  auto emit = claim_protocol_stdout();
  Spec spec = load_spec(vm["spec"].as<std::string>());
  if (vm.count("sizes")) spec.timing.sizes = parse_sizes(vm["sizes"].as<std::string>());
  std::vector<std::filesystem::path> files;
  for (const auto& f : vm["plugin"].as<std::vector<std::string>>()) files.emplace_back(f);
  PluginSet set = load_plugins({{}, files});
  std::vector<TimedArm> arms;
  for (const auto& n : vm["arm"].as<std::vector<std::string>>()) {
    LoadedArm* a = find_arm(set, n);
    if (!a) throw std::runtime_error("arm " + n + " not found: " + load_errors(set));
    arms.push_back({a->arm.get(), a->identity});
  }
  time_arms(arms, spec, emit);
  // The timing sizes were prepared here, not in qualification: keep what the arms built for them.
  if (vm.count("artifacts-dir"))
    for (const auto& n : vm["arm"].as<std::vector<std::string>>()) {
      LoadedArm* a = find_arm(set, n);
      write_arm_artifacts(std::filesystem::path(vm["artifacts-dir"].as<std::string>()) / n, *a->arm,
                          a->identity, a->plugin_file, "timing-");
    }
  emit({{"type", "done"}});
  return kOk;
}

}  // namespace kq::cli
