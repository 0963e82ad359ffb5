// Worker modes: the parent kq starts these in child processes and reads their JSON lines, so
// that an arm that crashes, corrupts its CUDA context or hangs takes only its worker down.
#include <algorithm>
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
      "artifacts-dir", po::value<std::string>(), "")("hang-timeout", po::value<double>(), "")(
      "timing-sizes", po::value<std::string>(), "");
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
    if (vm.count("timing-sizes"))
      plan.timing_sizes = parse_sizes(vm["timing-sizes"].as<std::string>());
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
      "sizes", po::value<std::string>(), "")("artifacts-dir", po::value<std::string>(), "")(
      "no-blocking-kernel", po::bool_switch(), "")("brief", po::bool_switch(), "");
  po::variables_map vm;
  if (!parse_subcommand("kq __worker-time (internal)", opts, {}, args, vm)) return kOk;
  auto emit = claim_protocol_stdout();
  Spec spec = load_spec(vm["spec"].as<std::string>());
  if (vm.count("sizes")) spec.timing.sizes = parse_sizes(vm["sizes"].as<std::string>());
  if (vm["no-blocking-kernel"].as<bool>()) spec.timing.blocking_kernel = false;
  if (vm["brief"].as<bool>()) {
    TimingPolicy& t = spec.timing;
    t.min_rounds = std::min(t.min_rounds, 8);
    t.max_rounds = std::min(t.max_rounds, 16);
    t.max_seconds = std::min(t.max_seconds, 5.0);
    t.warmup_ms = std::min(t.warmup_ms, 10.0);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& f : vm["plugin"].as<std::vector<std::string>>()) files.emplace_back(f);
  // "arm#2" is a second, independent instance of "arm" (its plugin's arms created again), timed
  // as a separate arm: the same kernel twice in one run shows how far the method agrees with
  // itself.
  std::vector<PluginSet> sets;
  std::vector<TimedArm> arms;
  std::vector<LoadedArm*> loaded;
  for (const auto& n : vm["arm"].as<std::vector<std::string>>()) {
    const std::string base = n.substr(0, n.find('#'));
    const std::size_t instance =
        n.find('#') == std::string::npos ? 0 : std::stoul(n.substr(n.find('#') + 1)) - 1;
    while (sets.size() <= instance) sets.push_back(load_plugins({{}, files}));
    LoadedArm* a = find_arm(sets[instance], base);
    if (!a) throw std::runtime_error("arm " + base + " not found: " + load_errors(sets[instance]));
    ArmIdentity id = a->identity;
    id.name = n;
    arms.push_back({a->arm.get(), id});
    loaded.push_back(a);
  }
  time_arms(arms, spec, emit);
  // The timing sizes were prepared here, not in qualification: keep what the arms built for them.
  if (vm.count("artifacts-dir"))
    for (std::size_t i = 0; i < arms.size(); ++i)
      write_arm_artifacts(
          std::filesystem::path(vm["artifacts-dir"].as<std::string>()) / arms[i].identity.name,
          *loaded[i]->arm, loaded[i]->identity, loaded[i]->plugin_file, "timing-");
  emit({{"type", "done"}});
  return kOk;
}

}  // namespace kq::cli
