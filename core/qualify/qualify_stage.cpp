#include "qualify/qualify_stage.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include <sys/socket.h>
#include <unistd.h>

#include "device/memory.hpp"
#include "plan/choose_points.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/big_case_lock.hpp"
#include "qualify/case_claims.hpp"
#include "qualify/gpu_placer.hpp"
#include "qualify/sanitizer_log.hpp"
#include "qualify/shared_arm.hpp"
#include "qualify/shared_cases.hpp"
#include "spec/spec.hpp"
#include "util/env_number.hpp"
#include "util/host_memory.hpp"
#include "util/json_lines.hpp"
#include "worker/protocol.hpp"
#include "worker/supervise.hpp"

namespace kq {
namespace {

// A worker's exit or the shared data's release that takes this long is shown.
constexpr double kLongLingerS = 3.0;

using nlohmann::json;

// What a worker ended with: its verdict (made up here when it died or hung) and exit code.
struct WorkerVerdict {
  rec::VerdictRecord verdict;
  int exit_code = 0;
};

// What the stage's workers share: the GPUs they are placed on; how many run now, and up to how
// many an arm whose cases are shared takes more workers (twice --jobs); the plan's cases in
// order and their shape groups, for those arms (qualify/shared_arm.hpp).
struct StageRoom {
  explicit StageRoom(std::vector<GpuSlot> gpus) : placer(std::move(gpus)) {}
  GpuPlacer placer;
  std::atomic<int> running{0};
  int capacity = 0;
  std::vector<std::string> case_order;
  std::size_t shape_groups = 0;
};

// At most this many workers share one arm's cases.
constexpr int kMaxShards = 16;

// A worker's exit is part of the stage's wall time: its log says how long it took after its
// last record, and a long one (interpreter teardown, a pool of compilers) is also shown.
void report_linger(const std::string& arm, const std::string& pass,
                   const std::filesystem::path& log, double lingered_s) {
  char line[200];
  std::snprintf(line, sizeof line, "the worker exited %.2f s after its last record", lingered_s);
  std::ofstream(log, std::ios::app) << "kq: " << line << "\n";
  if (lingered_s >= kLongLingerS)
    std::cout << "  " << arm << (pass.empty() ? "" : " (" + pass + ")") << ": " << line << "\n"
              << std::flush;
}

// A worker the kernel's OOM killer took is not judged: the machine's memory ran out, which
// says nothing of the arm's answers (its kq process and the other workers hold memory too). The
// arm is not qualified either, so no arm escapes a check by it.
void out_of_host_memory(rec::VerdictRecord& v) {
  v.verdict = rec::Verdict::not_run;
  v.check = "host_memory";
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f", static_cast<double>(total_host_bytes()) / (1u << 30));
  *v.detail += " (this machine has " + std::string(gib) +
               " GiB); not judged: a machine with more memory, or kq run --points with smaller "
               "points, judges it";
}

// One worker: `prefix` (a sanitizer command, or nothing) then kq in worker mode. Records are
// passed to `record`, tagged with "pass" when `pass` is not empty.
WorkerVerdict run_worker(const StageArm& a, const QualifyStageOptions& opt, SharedCaseFeed* feed,
                         const std::vector<std::string>& prefix, const std::string& pass,
                         bool quick, const std::filesystem::path& log,
                         const std::function<void(const json&)>& record, double slowdown,
                         StageRoom& room, int shard = 0, const std::filesystem::path& claims = {}) {
  const std::string& name = a.identity.name;
  GpuPlacer& placer = room.placer;
  struct Running {  // counted while it runs: an arm's shared cases take more workers while few do
    std::atomic<int>& n;
    explicit Running(std::atomic<int>& c) : n(c) { ++n; }
    ~Running() { --n; }
  } running{room.running};
  // A CUDA worker's GPU, given back when it ends; its case records name it.
  std::optional<GpuSlot> gpu;
  if (a.identity.device == Device::cuda) gpu = placer.take();
  struct GiveBack {
    GpuPlacer& placer;
    const std::optional<GpuSlot>& gpu;
    ~GiveBack() {
      if (gpu) placer.give_back(*gpu);
    }
  } give_back{placer, gpu};
  QualifyWorkerArgs w;
  w.spec = opt.spec_file.string();
  w.plugin = a.plugin_file.string();
  w.arm = name;
  w.quick = quick;
  w.timing_sizes = opt.timing_sizes;
  w.added_points = opt.added_points;
  w.hang_timeout = opt.hang_timeout_s;
  if (!a.identity.origin.empty()) w.origins = {a.identity.origin};
  // The cases computed beside the workers come over a socket of the worker's own.
  int sockets[2] = {-1, -1};
  if (feed != nullptr && feed->has_late() &&
      ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) != 0)
    sockets[0] = sockets[1] = -1;  // then the worker computes those itself
  if (feed != nullptr) w.case_data = feed->subscribe(sockets[0], sockets[1]);
  w.claims = claims.string();
  if (gpu) w.gpu = gpu->visible_id;
  if (pass.empty() && shard == 0) w.artifacts_dir = opt.artifacts_dir.string();
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {self_executable().string(), kWorkerQualifyMode});
  for (auto& arg : w.to_argv()) argv.push_back(std::move(arg));
  std::optional<rec::VerdictRecord> verdict;
  std::string last_case;
  double case_budget_s = opt.hang_timeout_s;  // the case's own budget, once prepare() returned
  const double startup_s = (opt.hang_timeout_s + 30.0) * slowdown;  // plugin load, CUDA context
  WorkerExit ex = supervise_worker(
      argv, log, startup_s,
      [&](json j) {
        if (!pass.empty()) j["pass"] = pass;
        if (gpu && rec::is<rec::CaseResult>(j)) j["gpu"] = gpu->index;
        record(j);
        if (rec::is<rec::VerdictRecord>(j)) verdict = j.get<rec::VerdictRecord>();
        if (rec::is<rec::CaseStart>(j)) {
          const auto start = j.get<rec::CaseStart>();
          last_case = start.case_name;
          case_budget_s = start.budget_s;
          return start.prepare_budget_s.value_or(start.budget_s) * slowdown;
        }
        if (rec::is<rec::Prepared>(j)) return case_budget_s * slowdown;
        return opt.hang_timeout_s * slowdown;
      },
      sockets[1] >= 0 ? std::vector<int>{sockets[1]} : std::vector<int>{});
  if (sockets[0] >= 0) {
    feed->unsubscribe(sockets[0]);  // the feed's end: it closes it
    ::close(sockets[1]);
  }
  report_linger(name, pass, log, ex.lingered_s);
  if (!verdict || ex.hung) {
    verdict = rec::VerdictRecord{};
    verdict->arm = name;
    verdict->verdict = ex.hung ? rec::Verdict::hung : rec::Verdict::crashed;
    verdict->check = ex.hung ? "hang" : "crash";
    verdict->case_name = last_case;
    verdict->detail =
        "worker " + ex.describe() + (last_case.empty() ? "" : " during case " + last_case);
    if (ex.oom_killed && !ex.hung) out_of_host_memory(*verdict);
    if (!pass.empty()) verdict->pass = pass;
    record(*verdict);
  }
  return {*verdict, ex.exit_code};
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

namespace {

// How many workers share an arm's cases. An arm loaded from a file compiles as it goes
// (torch.compile builds every static shape anew, max-autotune tunes each, Triton JITs each
// kernel) and is the longest of a stage by far: where the stage runs four workers or more at
// once, as many as it runs share its cases, at most eight. A shape's build is a worker's
// latency (about 0.8 s in torch.compile, 1 s under max-autotune, whether four or eight shared
// an arm), not the host's cores: on an H100 host of 16 cores eight halved what four took
// (KernelBench's 44_avg_pool_1d, 329 shapes, 74 s a task; 41_max_pool_1d's 265 took 114 s).
// KQ_QUALIFY_SHARDS sets it for every arm from a file (1: none shared, at most 16), to measure
// what more workers buy on a host of many cores.
int shards_for(const StageArm& a, const QualifyStageOptions& opt) {
  if (a.identity.origin.empty()) return 1;
  if (const auto n = env_number("KQ_QUALIFY_SHARDS"))
    return static_cast<int>(std::clamp<std::uint64_t>(*n, 1, 16));
  return opt.jobs >= 4 ? std::clamp(opt.jobs, 4, 8) : 1;
}

// One arm's qualification: its worker (or workers, shards_for), then (for a CUDA arm with
// sanitize tools) one worker per tool under compute-sanitizer. Returns the final verdict.
rec::VerdictRecord qualify_one(const StageArm& a, const QualifyStageOptions& opt,
                               SharedCaseFeed* feed, const std::function<void(const json&)>& record,
                               StageRoom& room) {
  const std::string& name = a.identity.name;
  const int shards = shards_for(a, opt);
  rec::VerdictRecord verdict;
  if (shards > 1) {
    SharedArmOptions shared;
    shared.workers = shards;
    shared.max_workers = kMaxShards;
    shared.case_order = room.case_order;
    shared.shape_groups = room.shape_groups;
    shared.claims = opt.log_dir / ("claims-" + name);
    shared.room = [&room] { return room.running.load() < room.capacity; };
    verdict = run_shared_arm(
        shared,
        [&](int k, const std::filesystem::path& claims, const Emit& emit) {
          const auto log =
              opt.log_dir /
              ("qualify-" + name + (k == 0 ? "" : ".shard" + std::to_string(k + 1)) + ".log");
          return run_worker(a, opt, feed, {}, "", opt.quick, log, emit, 1.0, room, k, claims)
              .verdict;
        },
        record);
  } else {
    verdict = run_worker(a, opt, feed, {}, "", opt.quick,
                         opt.log_dir / ("qualify-" + name + ".log"), record, 1.0, room)
                  .verdict;
  }

  const bool sanitize = a.identity.device == Device::cuda && !opt.sanitize_tools.empty() &&
                        verdict.verdict != rec::Verdict::unsupported;
  if (!sanitize) return verdict;
  std::optional<rec::SanitizerFinding> first_finding;
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
    const WorkerVerdict v =
        run_worker(a, opt, feed, prefix, tool, true,
                   opt.log_dir / ("qualify-" + tool + "-" + name + ".log"), record, 20.0, room);
    const json found = read_sanitizer_log(log);
    rec::SanitizerFinding f;
    f.arm = name;
    f.tool = tool;
    f.log = log.filename().string();
    f.errors = found.value("errors", -1L);
    f.first = found.value("first", "");
    f.verdict_under_tool = std::string(rec::to_string(v.verdict.verdict));
    if (f.errors < 0 && v.exit_code == 86) f.errors = 1;
    record(f);
    if (f.errors > 0 && !first_finding) first_finding = f;
  }
  if (first_finding && verdict.verdict == rec::Verdict::qualified) {
    const rec::SanitizerFinding& f = *first_finding;
    rec::VerdictRecord rejected;
    rejected.arm = name;
    rejected.verdict = rec::Verdict::rejected;
    rejected.check = "sanitizer_" + f.tool;
    rejected.counts = verdict.counts.value_or(rec::CaseCounts{});
    rejected.detail = f.tool + " found " + std::to_string(f.errors) + " error(s): " + f.first;
    verdict = rejected;
    record(verdict);
  }
  return verdict;
}

// Whether arm a gets a worker here: a CUDA arm where CUDA is unusable is skipped instead.
bool starts_worker(const StageArm& a, bool cuda_ok) {
  return a.identity.device != Device::cuda || cuda_ok;
}

// The workers the stage will start: one per arm that can run here, and for a CUDA arm one
// more per sanitizer tool.
std::size_t planned_workers(const std::vector<StageArm>& arms, const QualifyStageOptions& opt,
                            bool cuda_ok) {
  std::size_t n = 0;
  for (const StageArm& a : arms)
    if (starts_worker(a, cuda_ok))
      n += static_cast<std::size_t>(shards_for(a, opt)) +
           (a.identity.device == Device::cuda ? opt.sanitize_tools.size() : 0);
  return n;
}

// The spec as the workers read it, and the plan they make of it.
Spec stage_spec(const QualifyStageOptions& opt) {
  Spec spec = load_spec(opt.spec_file);
  add_timing_points(spec, opt.added_points);
  return spec;
}
PlanOptions stage_plan(const QualifyStageOptions& opt) {
  PlanOptions plan;
  plan.quick = opt.quick;
  plan.timing_sizes = opt.timing_sizes;
  return plan;
}

// Where an arm's cases are shared (shards_for): the names of the plan's cases in its order (the
// first failure of a shared arm is the first in it) and how many shape groups they make.
void shared_plan(const std::vector<StageArm>& arms, const QualifyStageOptions& opt,
                 StageRoom& room) {
  if (std::none_of(arms.begin(), arms.end(),
                   [&](const StageArm& a) { return shards_for(a, opt) > 1; }))
    return;
  const std::vector<Case> cases = plan_cases(stage_spec(opt), stage_plan(opt));
  for (const Case& c : cases) room.case_order.push_back(c.name);
  room.shape_groups = shape_groups(cases).size();
}

// The cases' data for the stage's workers, or none where fewer than two workers would read it.
// For a single worker it is computed no fewer times, only into shmem, whose pages the kernel
// provides 4 KiB at a time (THP for shmem is off on the hosts we measured). Full cpu_tbb
// qualifications here, three alternating pairs: 26.9 to 46.8 s shared (30 to 65 s of system
// time) against 15.2 to 22.3 s computed in the worker (5 to 10 s).
std::unique_ptr<SharedCaseFeed> share_cases(const std::vector<StageArm>& arms,
                                            const QualifyStageOptions& opt, bool cuda_ok) {
  const std::size_t workers = planned_workers(arms, opt, cuda_ok);
  if (workers == 0) return nullptr;
  if (workers == 1) {
    std::cout << "  one worker: it computes its cases' inputs and references itself\n"
              << std::flush;
    return nullptr;
  }
  const Spec spec = stage_spec(opt);
  auto feed =
      std::make_unique<SharedCaseFeed>(spec, plan_cases(spec, stage_plan(opt)),
                                       shared_cases_budget(), opt.log_dir / "shared-cases.log");
  char line[240];
  std::snprintf(line, sizeof line,
                "  inputs and references of %zu cases computed once for every arm: %.2f GB in "
                "%.1f s%s\n",
                feed->size(), static_cast<double>(feed->bytes()) / 1e9, feed->early_seconds(),
                feed->has_late() ? "; the largest cases' beside the workers" : "");
  std::cout << line << std::flush;
  feed->start();
  return feed;
}

// Once the workers are done: how long the cases computed beside them took.
void report_late_cases(SharedCaseFeed& feed) {
  feed.finish();
  if (!feed.has_late()) return;
  char line[200];
  std::snprintf(line, sizeof line,
                "  inputs and references of the largest cases, %.2f GB, computed beside the "
                "workers in %.1f s\n",
                static_cast<double>(feed.late_bytes()) / 1e9, feed.late_seconds());
  std::cout << line << std::flush;
}

// The shared data given back to the kernel, which frees shmem one page at a time (51.5 GB of
// the 2^31 + 5 case took about 7 s on the H200): a long release is shown.
void release_shared_cases(std::unique_ptr<SharedCaseFeed> feed) {
  if (!feed) return;
  const double gb = static_cast<double>(feed->bytes()) / 1e9;
  const auto t0 = std::chrono::steady_clock::now();
  feed.reset();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (s < kLongLingerS) return;
  char line[120];
  std::snprintf(line, sizeof line, "  shared inputs and references, %.2f GB, released in %.1f s\n",
                gb, s);
  std::cout << line << std::flush;
}

// The order in which workers start: CPU arms first, then the arms loaded from files (Python),
// then the rest, each group in the order given: the longest first, as far as the kind tells. A
// CPU arm's largest cases run at host speed, tens of seconds where a CUDA arm's take a few, and
// an arm from a file compiles as it goes (torch.compile builds every static shape anew, Triton
// JITs each): either, started last when the other slots have emptied, would set the stage's wall
// time alone.
std::vector<std::size_t> launch_order(const std::vector<StageArm>& arms) {
  std::vector<std::size_t> order(arms.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto rank = [&](std::size_t i) {
    const ArmIdentity& a = arms[i].identity;
    return a.device != Device::cuda ? 0 : !a.origin.empty() ? 1 : 2;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return rank(x) < rank(y); });
  return order;
}

}  // namespace

int default_qualify_jobs() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores / 2, 1u, 8u));
}

std::vector<rec::VerdictRecord> qualify_stage(const std::vector<StageArm>& arms,
                                              const QualifyStageOptions& opt) {
  JsonLinesWriter out(opt.out_jsonl);
  std::string no_cuda_reason;
  const bool cuda_ok = cuda_usable(&no_cuda_reason);
  // Workers run side by side: their records reach the file and the display one at a time.
  std::mutex mu;
  // Each record as written carries "at_s", the seconds since the stage began: the stage's
  // timeline (which arm waited for what, which one set the wall time).
  const auto began = std::chrono::steady_clock::now();
  auto record = [&](const json& j) {
    json stamped = j;
    stamped["at_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    std::lock_guard lock(mu);
    out.write(stamped);
    if (opt.on_record) opt.on_record(j);
  };

  // Workers side by side take turns at the cases that need most of the machine's memory.
  std::filesystem::create_directories(opt.log_dir);
  // Every case's inputs and references, computed once here for all the workers, which inherit
  // them sealed (read-only for every process).
  std::unique_ptr<SharedCaseFeed> feed = share_cases(arms, opt, cuda_ok);
  name_big_case_turns(opt.log_dir);
  std::vector<rec::VerdictRecord> verdicts(arms.size());
  const std::vector<std::size_t> order = launch_order(arms);
  StageRoom room(opt.gpus);
  // KQ_QUALIFY_ROOM replaces it, to measure what joining workers buy (0: none joins).
  room.capacity = static_cast<int>(std::min<std::uint64_t>(
      env_number("KQ_QUALIFY_ROOM").value_or(2 * static_cast<std::uint64_t>(std::max(opt.jobs, 1))),
      1024));
  shared_plan(arms, opt, room);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  auto work = [&] {
    for (std::size_t n = next++; n < arms.size(); n = next++) {
      const std::size_t i = order[n];
      const StageArm& a = arms[i];
      try {
        if (!starts_worker(a, cuda_ok)) {
          verdicts[i].arm = a.identity.name;
          verdicts[i].verdict = rec::Verdict::skipped;
          verdicts[i].detail = no_cuda_reason;
          record(verdicts[i]);
          continue;
        }
        verdicts[i] = qualify_one(a, opt, feed.get(), record, room);
        if (opt.on_arm_done) opt.on_arm_done(a);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        next = arms.size();
      }
    }
  };
  const std::size_t jobs =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::max(opt.jobs, 1)), 1, arms.size());
  std::vector<std::thread> pool;
  for (std::size_t j = 1; j < jobs; ++j) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (feed) report_late_cases(*feed);
  release_shared_cases(std::move(feed));
  if (failure) std::rethrow_exception(failure);
  return verdicts;
}

}  // namespace kq
