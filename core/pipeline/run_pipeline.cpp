#include "pipeline/run_pipeline.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include <tbb/parallel_for_each.h>

#include "artifacts/artifacts.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/run_outlook.hpp"
#include "plan/timed_points.hpp"
#include "qualify/big_case_lock.hpp"
#include "report/printer.hpp"
#include "rundir/manifest.hpp"
#include "timing/early_worker.hpp"
#include "timing/time_stage.hpp"
#include "worker/supervise.hpp"

namespace kq {
namespace {

struct Qualified {
  std::vector<StageArm> arms;
  bool candidate_failed = false;
};

Qualified qualify(const RunPipelineOptions& o, Progress& progress) {
  std::cout << "qualifying " << o.arms.size() << " arm(s)\n";
  auto q = QualifyStageOptions::for_run_dir(o.dir);
  q.quick = o.quick;
  q.timing_sizes = o.timed.keys;  // what is timed is qualified too
  q.added_points = o.timed.added;
  q.hang_timeout_s = o.hang_timeout_s.value_or(o.spec.qualification.hang_timeout_s);
  q.jobs = o.jobs;
  q.gpus = o.gpus;
  q.sanitize_tools = o.sanitize.tools;
  q.sanitizer = o.sanitize.sanitizer;
  q.on_record = [&](const nlohmann::json& j) { progress.record(j); };
  q.on_arm_done = [&](const StageArm& a) {
    finish_artifacts(o.dir / "artifacts" / a.identity.name);
  };
  auto verdicts = qualify_stage(o.arms, q);
  progress.finish();  // the arms skipped, one line per reason

  Qualified out;
  for (std::size_t i = 0; i < o.arms.size(); ++i) {
    const rec::Verdict v = verdicts[i].verdict;
    if (v == rec::Verdict::qualified) out.arms.push_back(o.arms[i]);
    if (rec::failed(v)) out.candidate_failed = true;
  }
  return out;
}

// --twice ARM: a second instance of a qualified arm, timed as ARM#2.
void add_second_instance(const std::string& twice, std::vector<StageArm>& qualified) {
  auto it = std::find_if(qualified.begin(), qualified.end(),
                         [&](const StageArm& a) { return a.identity.name == twice; });
  if (it == qualified.end()) {
    std::cout << "  --twice " << twice << ": not a qualified arm of this run; timed once\n";
    return;
  }
  StageArm copy = *it;
  copy.identity.name += "#2";
  qualified.push_back(copy);
}

TimeStageOptions timing_options(const RunPipelineOptions& o, Progress& progress) {
  TimeStageOptions t;
  t.spec_file = o.dir / "spec.yaml";
  t.out_jsonl = o.dir / "rounds.jsonl";
  t.log_file = o.dir / "logs" / "time.log";
  t.on_record = [&](const nlohmann::json& j) { progress.record(j); };
  t.sizes = o.timed.keys;
  t.added_points = o.timed.added;
  t.blocking_kernel = o.blocking_kernel;
  t.cpu_call_budget_s = o.cpu_call_budget_s;
  t.quick = o.quick;
  if (!o.gpus.empty()) t.gpu = o.gpus.front().visible_id;
  t.artifacts_dir = o.dir / "artifacts";
  t.isolation = {self_executable().parent_path() / "plugins", o.isolate_all,
                 o.spec.decision.baselines, o.spec.decision.eager};
  return t;
}

// The clean timing worker, started now to make its arms' first calls while they qualify
// (timing/early_worker.hpp); none where it is not asked for or --twice adds an instance.
std::unique_ptr<EarlyTimingWorker> start_early_timing(const RunPipelineOptions& o,
                                                      Progress& progress) {
  if (!o.timing || o.no_timing || !o.early_timing || !o.twice.empty()) return nullptr;
  auto early = std::make_unique<EarlyTimingWorker>(o.arms, timing_options(o, progress));
  if (!early->started()) return nullptr;
  std::cout << "  the timing worker starts now: its arms' first calls (compiles, plan searches) "
               "are made beside qualification; nothing is timed before it ends\n";
  return early;
}

// Returns false when the timing stage stopped early.
bool time_qualified(const RunPipelineOptions& o, const std::vector<StageArm>& qualified,
                    Progress& progress, EarlyTimingWorker* early) {
  std::cout << "timing " << qualified.size() << " qualified arm(s)\n";
  auto res = time_stage(qualified, timing_options(o, progress), early);
  tbb::parallel_for_each(qualified.begin(), qualified.end(), [&](const StageArm& a) {
    finish_artifacts(o.dir / "artifacts" / a.identity.name);  // mostly a disassembler's time
  });
  if (res.completed) return true;
  // What was measured stays in the run directory; the run as a whole did not complete.
  std::cout << "  timing stopped early: " << res.problem << " (see logs/time.log)\n";
  return false;
}

// Whether the report found an arm whose recheck failed or that was rejected while timed (named).
bool failed_while_timed(const RunSummary& summary) {
  bool failed = false;
  for (const TimingRow& row : summary.timing)
    for (const TimingCell& a : row.arms)
      if (!a.recheck_ok.value_or(true)) failed = true;
  for (const ArmRow& a : summary.arms)
    if (a.rejected_while_timed) {
      failed = true;
      std::cout << "  " << a.name << ": rejected while timed (" << a.check.value_or("")
                << "): " << a.detail.value_or("") << "\n";
    }
  return failed;
}

}  // namespace

RunPipelineResult run_pipeline(const RunPipelineOptions& o) {
  start_run_dir(o.dir, o.spec, o.arms, o.load_errors, o.plugin_environment, o.machine,
                o.command_line);
  std::cout << "kq " << o.command << " " << o.spec.op.op << " -> " << o.dir.string() << "\n"
            << run_outlook(o) << std::flush;

  RunPipelineResult result;
  Progress progress;
  std::map<std::int64_t, std::string> points;
  for (const TimedPoint& p : timed_points(o.spec, o.spec.timing.sizes)) points[p.size] = p.point;
  progress.name_points(points);
  // The big-case turns (qualify/big_case_lock.hpp) are named before the early timing worker
  // starts, so that its first calls at the big points take turns with qualification's cases.
  name_big_case_turns(QualifyStageOptions::for_run_dir(o.dir).log_dir);
  std::unique_ptr<EarlyTimingWorker> early = start_early_timing(o, progress);
  Qualified q = qualify(o, progress);
  result.candidate_failed = q.candidate_failed;
  if (o.timing && !o.twice.empty()) add_second_instance(o.twice, q.arms);
  if (o.timing && !o.no_timing && !q.arms.empty() &&
      !time_qualified(o, q.arms, progress, early.get()))
    result.candidate_failed = true;
  early.reset();
  progress.finish();

  const Report report = write_report(o.dir);
  if (failed_while_timed(report.summary)) result.candidate_failed = true;
  if (!o.junit.empty())
    std::filesystem::copy_file(o.dir / "junit.xml", o.junit,
                               std::filesystem::copy_options::overwrite_existing);
  std::cout << console_printer(o.timing)->print(report.summary, report.run);
  return result;
}

}  // namespace kq
