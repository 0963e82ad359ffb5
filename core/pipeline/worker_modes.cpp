#include "pipeline/worker_modes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "artifacts/artifacts.hpp"
#include "plan/choose_points.hpp"
#include "plan/plan_cases.hpp"
#include "plan/timed_points.hpp"
#include "plugins/loader.hpp"
#include "qualify/big_case_lock.hpp"
#include "qualify/case_claims.hpp"
#include "qualify/qualify_arm.hpp"
#include "qualify/shared_cases.hpp"
#include "record/instance_name.hpp"
#include "spec/spec.hpp"
#include "timing/stopping.hpp"
#include "timing/time_arms.hpp"
#include "timing/warm_arms.hpp"
#include "worker/roster.hpp"
#include "worker/supervise.hpp"

namespace kq {
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

// A few rounds per size: enough for the timing checks to run, not for a decision.
void make_brief(TimingPolicy& t) {
  t.min_rounds = std::min(t.min_rounds, 8);
  t.max_rounds = std::min(t.max_rounds, 16);
  t.max_seconds = std::min(t.max_seconds, 5.0);
  t.warmup_ms = std::min(t.warmup_ms, 10.0);
}

// The stage's shared case data; where it cannot be used (a tool in between, compute-sanitizer
// say, closed the descriptors), the worker computes every case's own, as without it.
SharedCases adopt_shared_cases(const std::string& argument) {
  try {
    return SharedCases::adopt(argument);
  } catch (const std::exception& e) {
    std::cerr << "shared case data not usable (" << e.what()
              << "): this worker computes every case's own\n";
    return {};
  }
}

// The GPU the stage gave this worker (kq run --devices), before anything starts CUDA: the
// worker sees it alone, as its device 0; its big cases take turns with the other workers' on
// that GPU only (qualify/big_case_lock.hpp).
void use_gpu(const std::string& gpu) {
  if (gpu.empty()) return;
  ::setenv("CUDA_VISIBLE_DEVICES", gpu.c_str(), 1);
  ::setenv(kBigCaseGpuEnv, gpu.c_str(), 1);
  std::cerr << "kq: this worker runs on CUDA_VISIBLE_DEVICES=" << gpu << "\n";
}

// A plugin that loads arms from files (the python plugin) loads only `origins` here (KQ_ARM_FILES,
// kq/arm.hpp): no other file's code runs in this worker. None: the arms are plugins' own.
void only_arm_files(const std::vector<std::string>& origins) {
  if (origins.empty()) return;
  std::string lines;
  for (const auto& o : std::set<std::string>(origins.begin(), origins.end())) lines += o + "\n";
  ::setenv("KQ_ARM_FILES", lines.c_str(), 1);
}

// A worker started beside qualification: every arm's first calls, then the roster (the arms
// that qualified, worker/roster.hpp); the others are dropped. Returns the kept arms whose warm
// calls changed the device, each with a device_state rejection recorded.
std::map<std::string, std::string> warm_then_take_roster(int fd, const Spec& spec,
                                                         bool cpu_beside_cuda, const Emit& emit,
                                                         std::vector<TimedArm>& arms,
                                                         std::vector<LoadedArm*>& loaded) {
  const auto t0 = std::chrono::steady_clock::now();
  const WarmResult warm = warm_arms(arms, spec, cpu_beside_cuda, [&] { emit(rec::Alive{}); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "kq: " << warm.calls << " first call(s) beside qualification in " << seconds
            << " s\n";
  emit(rec::Warmed{seconds, warm.calls});
  const std::vector<std::string> roster = read_roster(fd, [&] { emit(rec::Alive{}); });
  const std::set<std::string> keep(roster.begin(), roster.end());
  std::vector<TimedArm> kept_arms;
  std::vector<LoadedArm*> kept_loaded;
  for (std::size_t i = 0; i < arms.size(); ++i)
    if (keep.count(arms[i].identity.name)) {
      kept_arms.push_back(arms[i]);
      kept_loaded.push_back(loaded[i]);
    }
  arms = std::move(kept_arms);
  loaded = std::move(kept_loaded);

  std::map<std::string, std::string> rejected;
  const auto points = timed_points(spec, spec.timing.sizes);
  for (const auto& [name, changed] : warm.changed_device) {
    if (!keep.count(name) || points.empty()) continue;
    const std::string why = "at " + points.front().where() +
                            ", its first call (made beside qualification) changed the device "
                            "for the other arms: " +
                            changed + " (kq put it back)";
    emit(rec::TimingReject{
        name, points.front().size, "single", -1, "device_state", why, {}, {}, {}});
    rejected.emplace(name, why);
  }
  return rejected;
}

}  // namespace

bool worker_qualify(const QualifyWorkerArgs& args) {
  use_gpu(args.gpu);
  auto emit = claim_protocol_stdout();
  const std::string& name = args.arm;
  try {
    Spec spec = load_spec(args.spec);
    add_timing_points(spec, args.added_points);
    if (args.hang_timeout) spec.qualification.hang_timeout_s = *args.hang_timeout;
    only_arm_files(args.origins);
    PluginSet set = load_plugins({{}, {args.plugin}});
    LoadedArm* arm = find_arm(set, name);
    if (!arm) throw std::runtime_error("arm not found in " + args.plugin + ": " + load_errors(set));
    PlanOptions plan;
    plan.quick = args.quick;
    plan.timing_sizes = args.timing_sizes;
    SharedCases shared = adopt_shared_cases(args.case_data);
    const std::vector<Case> cases = plan_cases(spec, plan);
    std::optional<CaseClaims> claims;  // this worker's share, where others share the arm's cases
    TakeCase take;
    if (!args.claims.empty()) {
      claims.emplace(args.claims, cases);
      take = [&] { return claims->next(); };
    }
    auto verdict = qualify_arm(*arm->arm, arm->identity, spec, cases, emit, &shared, take);
    if (!args.artifacts_dir.empty() && verdict.verdict != rec::Verdict::unsupported &&
        verdict.verdict != rec::Verdict::crashed)
      write_arm_artifacts(std::filesystem::path(args.artifacts_dir) / name, *arm->arm,
                          arm->identity, arm->plugin_file);
  } catch (const std::exception& e) {
    rec::VerdictRecord v;
    v.arm = name;
    v.verdict = rec::Verdict::crashed;
    v.check = "worker_error";
    v.detail = std::string("the worker failed: ") + e.what();
    emit(v);
    return false;
  }
  return true;
}

void worker_time(const TimeWorkerArgs& args) {
  use_gpu(args.gpu);
  auto emit = claim_protocol_stdout();
  Spec spec = load_spec(args.spec);
  add_timing_points(spec, args.added_points);
  if (!args.sizes.empty()) spec.timing.sizes = args.sizes;
  if (args.no_blocking_kernel) spec.timing.blocking_kernel = false;
  spec.timing.cpu_call_budget_s = args.cpu_call_budget_s;
  if (args.quick) quick_timing(spec.timing);
  if (args.brief) make_brief(spec.timing);
  std::vector<std::filesystem::path> files(args.plugins.begin(), args.plugins.end());
  only_arm_files(args.origins);
  // "arm#2" is a second, independent instance of "arm" (its plugin's arms created again), timed
  // as a separate arm: the same kernel twice in one run shows how far the method agrees with
  // itself.
  std::vector<PluginSet> sets;
  std::vector<TimedArm> arms;
  std::vector<LoadedArm*> loaded;
  // "arm@label" is a reference timed in an isolated worker (timing/timing_workers.hpp): the arm
  // itself under the name its records carry.
  for (const auto& n : args.arms) {
    const std::string base = n.substr(0, n.find_first_of("#@"));
    const auto hash = n.find('#');
    const std::size_t instance = hash == std::string::npos ? 0 : std::stoul(n.substr(hash + 1)) - 1;
    while (sets.size() <= instance) sets.push_back(load_plugins({{}, files}));
    LoadedArm* a = find_arm(sets[instance], base);
    if (!a) throw std::runtime_error("arm " + base + " not found: " + load_errors(sets[instance]));
    ArmIdentity id = a->identity;
    id.name = n;
    arms.push_back({a->arm.get(), id});
    loaded.push_back(a);
  }
  std::map<std::string, std::string> rejected;
  if (args.roster_fd >= 0)
    rejected = warm_then_take_roster(args.roster_fd, spec, !args.quick, emit, arms, loaded);
  time_arms(arms, spec, emit, !args.quick, rejected);
  // The timing sizes were prepared here, not in qualification: keep what the arms built for them.
  if (!args.artifacts_dir.empty())
    for (std::size_t i = 0; i < arms.size(); ++i)
      if (!is_worker_reference(arms[i].identity.name))  // a reference's are its own run's
        write_arm_artifacts(std::filesystem::path(args.artifacts_dir) / arms[i].identity.name,
                            *loaded[i]->arm, loaded[i]->identity, loaded[i]->plugin_file,
                            "timing-");
  emit(rec::Done{});
}

}  // namespace kq
