#include <fstream>
#include <sstream>

#include "decision/decide.hpp"
#include "qualify/expectation.hpp"
#include "summary/summarize_parts.hpp"

namespace kq {
namespace {

// The arms with this verdict, grouped by their reason (detail), in the order of the reasons.
std::vector<ReasonGroup> group_by_reason(const std::vector<ArmRow>& arms, rec::Verdict verdict) {
  std::map<std::string, std::vector<std::string>> groups;
  for (const ArmRow& a : arms)
    if (a.verdict == verdict) groups[a.detail.value_or("")].push_back(a.name);
  std::vector<ReasonGroup> list;
  for (auto& [why, names] : groups) list.push_back({why, std::move(names)});
  return list;
}

// An arm's row before timing: its identity, then each verdict record's fields over the last
// (a sanitizer's rejection follows the worker's verdict and keeps what it does not restate).
ArmRow arm_row(const ManifestArm& a, const RunData& run) {
  ArmRow row;
  row.name = a.name;
  row.family = a.family;
  row.device = a.device;
  row.expected_rejection = a.expected_rejection;
  for (const auto& v : run.verdicts) {
    if (v.arm != a.name) continue;
    row.verdict = v.verdict;
    if (v.check) row.check = v.check;
    if (v.case_name) row.case_name = v.case_name;
    if (v.detail) row.detail = v.detail;
    if (v.counts) row.counts = v.counts;
  }
  for (const auto& f : run.sanitizer)
    if (f.arm == a.name) row.sanitizer.push_back(f);
  return row;
}

// What the arm compiled (the artifacts stage's index) and what it chose for each size (cuDNN:
// shaping, engine, knobs), timing sizes first.
void add_artifacts(const std::filesystem::path& dir, ArmRow& row) {
  std::ifstream in(dir / "index.json");
  if (!in) return;
  const nlohmann::json index = nlohmann::json::parse(in, nullptr, false);
  if (index.is_discarded() || !index.is_object()) return;
  ArtifactFiles files;
  if (auto list = index.find("files"); list != index.end() && list->is_array())
    for (const auto& f : *list)
      files.files.push_back(f.is_object() && f.contains("name") && f.at("name").is_string()
                                ? f.at("name").get<std::string>()
                                : std::string());
  if (auto sass = index.find("sass"); sass != index.end() && sass->is_string())
    files.sass = sass->get<std::string>();
  row.artifacts = files;
  for (const char* f : {"timing-chosen.md", "chosen.md"}) {
    std::ifstream c(dir / f);
    if (!c) continue;
    std::stringstream text;
    text << c.rdbuf();
    row.choice = text.str();
    break;
  }
}

// The timing checks reject an arm that qualified: its output was wrong in the timing loop or in
// a graph replay, or its work left the stream it was given. Its first timing_reject is its
// verdict; a run written before those records says so with a failed recheck.
std::map<std::string, rec::TimingReject> timing_rejections(const RunData& run) {
  std::map<std::string, rec::TimingReject> out;
  for (const auto& r : run.rejects) out.emplace(r.arm, r);
  for (const auto& r : run.rechecks)
    if (!r.ok && !out.count(r.arm)) {
      rec::TimingReject t;
      t.check = "timing_output";
      t.size = r.size;
      t.message = r.message.value_or("");
      out.emplace(r.arm, t);
    }
  return out;
}

void reject_while_timed(const rec::TimingReject& r, const RunData& run, ArmRow& row) {
  if (row.verdict != rec::Verdict::qualified) return;
  row.verdict = rec::Verdict::rejected;
  row.check = r.check;
  row.case_name = "timing/" + std::to_string(r.size);
  for (const rec::SizeStart& st : run.size_starts)  // format 2: the point's name
    if (st.size == r.size && st.point) row.case_name = "timing/" + *st.point;
  row.detail = r.message;
  row.rejected_while_timed = true;
}

// The counts of in-contract and out-of-contract cases of the good arms.
void count_cases(const RunData& run, Headline& h) {
  for (const auto& c : run.cases) {
    const ManifestArm* a = run.manifest.arm(c.arm);
    if (!a || known_broken(a->family, a->expected_rejection)) continue;
    if (c.result == "skipped") {  // not counted as run; said beside the counts
      h.in_contract_cases_skipped += c.in_contract;
      continue;
    }
    (c.in_contract ? h.in_contract_cases : h.out_of_contract_cases)++;
    if (c.in_contract && c.result == "passed") h.in_contract_cases_passed++;
    if (!c.in_contract && c.result == "refused") h.out_of_contract_refused++;
  }
}

// Whether a known-broken candidate was caught by its declared check; the good arms' and broken
// ones' totals into the headline.
void judge_arm(const ManifestArm& a, ArmRow& row, Headline& h) {
  if (known_broken(a.family, a.expected_rejection)) {
    if (rec::not_judged(row.verdict)) {
      row.caught = Caught::not_judged;
      return;
    }
    const bool caught = caught_as_declared(std::string(rec::to_string(row.verdict)),
                                           row.check.value_or(""), a.expected_rejection);
    row.caught = caught ? Caught::yes : Caught::no;
    h.broken_total++;
    h.broken_rejected += caught;
  } else if (!rec::not_judged(row.verdict)) {
    h.good_total++;
    h.good_qualified += row.verdict == rec::Verdict::qualified;
  }
}

}  // namespace

std::map<std::string, std::string> summarize_arms(const RunData& run, RunSummary& s) {
  std::map<std::string, ArmRow> rows;
  for (const auto& a : run.manifest.arms) rows[a.name] = arm_row(a, run);
  count_cases(run, s.headline);

  std::map<std::string, std::string> not_adopted;
  for (const auto& [arm, r] : timing_rejections(run)) {
    // A reference timed again in an isolated worker ("torch_compile@label") that fails there
    // says the worker was disturbed (summarize_workers), not that the reference is wrong.
    if (is_worker_reference(arm)) continue;
    not_adopted[arm] = "rejected while timed: " + r.check;
    if (auto it = rows.find(instance_arm(arm)); it != rows.end())
      reject_while_timed(r, run, it->second);
  }
  // A disturbed clean worker: what any arm's samples there measured is in doubt. (An isolated
  // worker's disturbance keeps its own arms out: summarize_workers.)
  for (const rec::Disturbed& d : run.disturbed) {
    if (run.worker_of.count(d.arm)) continue;
    for (const auto& r : run.rounds)
      if (!run.worker_of.count(r.arm))
        not_adopted.emplace(r.arm, "the timing worker was disturbed: " + d.what + " during " +
                                       d.arm + "'s profiled call");
    break;
  }
  for (auto& [name, row] : rows) add_artifacts(run.dir / "artifacts" / name, row);

  for (const auto& a : run.manifest.arms) {
    ArmRow& row = rows[a.name];
    judge_arm(a, row, s.headline);
    s.arms.push_back(row);
  }
  // Arms that declined the spec and arms skipped on this machine (no device for them), grouped
  // by their reason: the reports list them once, below the verdicts.
  s.declined = group_by_reason(s.arms, rec::Verdict::unsupported);
  s.skipped = group_by_reason(s.arms, rec::Verdict::skipped);
  return not_adopted;
}

}  // namespace kq
