#include "pipeline/selftest.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>

#include "artifacts/artifacts.hpp"
#include "decision/decide.hpp"
#include "pipeline/progress.hpp"
#include "plan/timed_points.hpp"
#include "qualify/expectation.hpp"
#include "report/printer.hpp"
#include "rundir/manifest.hpp"
#include "timing/time_stage.hpp"
#include "util/json_lines.hpp"
#include "worker/supervise.hpp"

namespace kq {
namespace {

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
  int ran = 0;  // specs on which it was neither unsupported nor skipped
  int as_expected = 0;
  std::string first_problem;
  std::string skipped_reason;
};

// An arm's verdict on one spec, as the selftest judges it: the report's (after timing), or
// "flagged" where a plausibility flag names a qualified arm.
struct SpecVerdict {
  std::string verdict, check, detail;
};

SpecVerdict spec_verdict(const ArmRow* row, const rec::VerdictRecord& qualification,
                         const RunSummary& summary) {
  SpecVerdict v;
  if (row) {
    v = {std::string(rec::to_string(row->verdict)), row->check.value_or(""),
         row->detail.value_or("")};
  } else {
    v = {std::string(rec::to_string(qualification.verdict)), qualification.check.value_or(""),
         qualification.detail.value_or("")};
  }
  if (v.verdict != "qualified") return v;
  for (const FlagRow& f : summary.flags)
    if (instance_arm(f.arm) == qualification.arm) return {"flagged", "", f.message};
  return v;
}

// One spec's qualification and brief timing, in its run directory; returns the final verdict of
// every arm, in order, as the report judged it.
std::vector<SpecVerdict> run_spec(const SelftestOptions& o, const Spec& spec,
                                  const std::filesystem::path& dir, Progress& progress) {
  std::filesystem::create_directories(dir / "logs");
  start_run_dir(dir, spec, o.arms, o.load_errors, o.plugin_environment, o.machine, o.command_line);
  std::cout << spec.op.op << " (" << spec.path << ")\n";
  auto q = QualifyStageOptions::for_run_dir(dir);
  q.quick = o.quick;
  q.hang_timeout_s = o.hang_timeout_s;
  q.jobs = o.jobs;
  q.sanitize_tools = o.sanitize.tools;
  q.sanitizer = o.sanitize.sanitizer;
  q.timing_sizes = o.sizes;  // the sizes timed are qualified too
  if (spec.shaped) q.timing_sizes = {smallest_timing_point(spec)};
  q.on_record = [&](const nlohmann::json& j) {
    // Arms that decline a spec or cannot run here are summed up at the end, not per spec.
    if (rec::is<rec::VerdictRecord>(j)) {
      const rec::Verdict v = j.get<rec::VerdictRecord>().verdict;
      if (v == rec::Verdict::unsupported || v == rec::Verdict::skipped) return;
    }
    progress.record(j);
  };
  q.on_arm_done = [&](const StageArm& a) { finish_artifacts(dir / "artifacts" / a.identity.name); };
  const auto qualification = qualify_stage(o.arms, q);
  // What qualified is timed briefly at one size, so that the timing checks (outputs of timed
  // samples and graph replays, stream discipline, plausibility) meet every arm too; or in full
  // at the sizes asked for.
  std::vector<StageArm> qualified;
  for (std::size_t i = 0; i < o.arms.size(); ++i)
    if (qualification[i].verdict == rec::Verdict::qualified) qualified.push_back(o.arms[i]);
  if (!qualified.empty() && !o.no_timing) {
    TimeStageOptions t;
    t.spec_file = dir / "spec.yaml";
    t.out_jsonl = dir / "rounds.jsonl";
    t.log_file = dir / "logs" / "time.log";
    // Each broken candidate's file apart, as kq run does; no references (no decision here).
    t.isolation.install_plugins = self_executable().parent_path() / "plugins";
    t.sizes = o.sizes.empty() ? std::vector<std::int64_t>{selftest_timing_size(spec)} : o.sizes;
    if (spec.shaped) t.sizes = {smallest_timing_point(spec)};  // its number
    t.brief = o.sizes.empty();
    t.on_record = [&](const nlohmann::json& j) { progress.record(j); };
    if (auto res = time_stage(qualified, t); !res.completed)
      std::cout << "  timing stopped early: " << res.problem << " (see " << t.log_file.string()
                << ")\n";
  }
  progress.finish();

  const RunSummary summary = write_report(dir).summary;
  std::vector<SpecVerdict> verdicts;
  for (std::size_t i = 0; i < o.arms.size(); ++i) {
    rec::VerdictRecord q_verdict = qualification[i];
    q_verdict.arm = o.arms[i].identity.name;
    verdicts.push_back(spec_verdict(summary.arm(q_verdict.arm), q_verdict, summary));
  }
  return verdicts;
}

// Counts one spec's verdict of an arm into its tally.
void count(Tally& t, const StageArm& arm, const Spec& spec, const SpecVerdict& verdict) {
  const std::string& v = verdict.verdict;
  if (v == "unsupported") return;
  if (v == "skipped") {
    t.skipped_reason = verdict.detail;
    return;
  }
  ++t.ran;
  const bool broken = known_broken(arm.identity);
  const std::string &check = verdict.check, &detail = verdict.detail;
  const bool ok =
      broken ? caught_as_declared(v, check, arm.identity.expected_rejection) : v == "qualified";
  if (ok) {
    ++t.as_expected;
  } else if (t.first_problem.empty()) {
    // Named by its file: several specs may share an op (residual_relu in f32, f16, bf16).
    t.first_problem = std::filesystem::path(spec.path).stem().string() + ": " + v +
                      (check.empty() ? "" : " by " + check) +
                      (broken ? " (declared " + arm.identity.expected_rejection + ")" : "") +
                      (detail.empty() ? "" : ": " + detail);
  }
}

struct Outcome {
  std::string text;
  bool counted = true, ok = false;
};

// A framework's own path (eager PyTorch, torch.compile: family "torch") is a baseline kq
// measures against, not an arm whose correctness this tree controls: its verdicts are shown but
// not counted. A framework's bug (torch 2.11's CPU gelu overflows to inf near FLT_MAX) rejects
// it rightly, and says nothing of the qualifier.
bool framework_baseline(const ArmIdentity& id) { return id.family == "torch"; }

Outcome observed(Outcome o) {
  o.text = "observed, not counted (a framework baseline): " + o.text;
  o.counted = false;
  return o;
}

Outcome judged(const Tally& t, const StageArm& a, bool shipped_specs) {
  const bool broken = known_broken(a.identity);
  if (t.ran == 0 && !t.skipped_reason.empty()) return {"skipped: " + t.skipped_reason, false};
  if (t.ran == 0 && broken && shipped_specs)
    return {"supports none of the specs (a broken candidate must claim one)", true};
  if (t.ran == 0) return {"supports none of the specs", false};
  const bool ok = t.as_expected == t.ran;
  if (!ok) return {t.first_problem, true, false};
  return {(broken ? "rejected as declared (" + a.identity.expected_rejection + ") on "
                  : "qualified on ") +
              std::to_string(t.ran) + " spec(s)",
          true, true};
}

Outcome outcome_of(const Tally& t, const StageArm& a, bool shipped_specs) {
  const Outcome o = judged(t, a, shipped_specs);
  return framework_baseline(a.identity) && o.counted ? observed(o) : o;
}

}  // namespace

SelftestResult selftest(const SelftestOptions& o) {
  std::cout << "kq selftest: " << o.arms.size() << " arms on " << o.specs.size() << " specs -> "
            << o.dir.string() << "\n";
  std::vector<Tally> tally(o.arms.size());
  Progress progress;
  for (const Spec& spec : o.specs) {
    const auto verdicts =
        run_spec(o, spec, o.dir / std::filesystem::path(spec.path).stem(), progress);
    for (std::size_t i = 0; i < o.arms.size(); ++i) count(tally[i], o.arms[i], spec, verdicts[i]);
  }

  SelftestResult r;
  nlohmann::json out = nlohmann::json::array();
  std::cout << "\n";
  for (std::size_t i = 0; i < o.arms.size(); ++i) {
    const StageArm& a = o.arms[i];
    const bool broken = known_broken(a.identity);
    const Outcome c = outcome_of(tally[i], a, o.shipped_specs);
    if (c.counted) (broken ? r.broken_total : r.good_total)++;
    if (c.counted && c.ok) (broken ? r.broken_rejected : r.good_qualified)++;
    std::cout << (c.counted ? (c.ok ? "  ok    " : "  FAIL  ") : "  -     ") << std::left
              << std::setw(38) << a.identity.name << " " << c.text << "\n";
    out.push_back({{"arm", a.identity.name},
                   {"family", a.identity.family},
                   {"counted", c.counted},
                   {"ok", c.ok},
                   {"ran_on", tally[i].ran},
                   {"outcome", c.text}});
  }
  write_file_atomic(o.dir / "selftest.json", nlohmann::json{{"broken_rejected", r.broken_rejected},
                                                            {"broken_total", r.broken_total},
                                                            {"good_qualified", r.good_qualified},
                                                            {"good_total", r.good_total},
                                                            {"arms", out}}
                                                     .dump(2) +
                                                 "\n");
  std::cout << "selftest: " << r.broken_rejected << " of " << r.broken_total
            << " broken candidates rejected, " << r.good_qualified << " of " << r.good_total
            << " good arms qualified\n";
  return r;
}

}  // namespace kq
