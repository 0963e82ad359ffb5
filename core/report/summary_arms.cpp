#include <fstream>
#include <sstream>

#include "qualify/expectation.hpp"
#include "report/summary.hpp"
#include "report/summary_parts.hpp"

namespace kq {
namespace {

using nlohmann::json;

// The arms with this verdict, grouped by their reason (detail):
// [{"reason", "arms":[names]}], in the order of the reasons.
json group_by_reason(const json& arms, rec::Verdict verdict) {
  std::map<std::string, json> groups;
  for (const auto& a : arms)
    if (a.value("verdict", "") == rec::to_string(verdict))
      groups[a.value("detail", "")].push_back(a.value("name", ""));
  json list = json::array();
  for (const auto& [why, names] : groups) list.push_back({{"reason", why}, {"arms", names}});
  return list;
}

// An arm's row before timing: its identity, then each verdict record's fields over the last
// (a sanitizer's rejection follows the worker's verdict and keeps what it does not restate).
json arm_row(const ManifestArm& a, const RunData& run) {
  json row = {{"name", a.name},
              {"family", a.family},
              {"device", a.device},
              {"expected_rejection", a.expected_rejection},
              {"verdict", "not run"}};
  for (const auto& v : run.verdicts) {
    if (v.arm != a.name) continue;
    const json j = v;
    for (const char* k : {"verdict", "check", "case", "detail", "counts"})
      if (j.contains(k)) row[k] = j[k];
  }
  for (const auto& f : run.sanitizer)
    if (f.arm == a.name) row["sanitizer"].push_back(f);
  return row;
}

// What the arm compiled (the artifacts stage's index) and what it chose for each size (cuDNN:
// shaping, engine, knobs), timing sizes first.
void add_artifacts(const std::filesystem::path& dir, json& row) {
  std::ifstream in(dir / "index.json");
  if (!in) return;
  json index = json::parse(in, nullptr, false);
  if (index.is_discarded()) return;
  json files = json::array();
  for (const auto& f : index.value("files", json::array())) files.push_back(f.value("name", ""));
  row["artifacts"] = {{"files", files}, {"sass", index.value("sass", "")}};
  for (const char* f : {"timing-chosen.md", "chosen.md"}) {
    std::ifstream c(dir / f);
    if (!c) continue;
    std::stringstream text;
    text << c.rdbuf();
    row["choice"] = text.str();
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

void reject_while_timed(const rec::TimingReject& r, json& row) {
  if (row.value("verdict", "") != "qualified") return;
  row["verdict"] = "rejected";
  row["check"] = r.check;
  row["case"] = "timing/" + std::to_string(r.size);
  row["detail"] = r.message;
  row["rejected_while_timed"] = true;
}

}  // namespace

std::string skipped_note(const json& headline) {
  const int n = headline.value("in_contract_cases_skipped", 0);
  if (n == 0) return {};
  return " (" + std::to_string(n) + " more skipped: see the arms' rows)";
}

std::map<std::string, std::string> summarize_arms(const RunData& run, json& s) {
  std::map<std::string, json> rows;
  for (const auto& a : run.manifest.arms) rows[a.name] = arm_row(a, run);

  int in_passed = 0, in_total = 0, in_skipped = 0, out_refused = 0, out_total = 0;
  for (const auto& c : run.cases) {
    const ManifestArm* a = run.manifest.arm(c.arm);
    if (!a || known_broken(a->family, a->expected_rejection)) continue;
    if (c.result == "skipped") {  // not counted as run; said beside the counts
      in_skipped += c.in_contract;
      continue;
    }
    (c.in_contract ? in_total : out_total)++;
    if (c.in_contract && c.result == "passed") in_passed++;
    if (!c.in_contract && c.result == "refused") out_refused++;
  }

  std::map<std::string, std::string> not_adopted;
  for (const auto& [arm, r] : timing_rejections(run)) {
    not_adopted[arm] = "rejected while timed: " + r.check;
    if (auto it = rows.find(instance_arm(arm)); it != rows.end()) reject_while_timed(r, it->second);
  }
  for (auto& [name, row] : rows) add_artifacts(run.dir / "artifacts" / name, row);

  int broken_total = 0, broken_caught = 0, good_total = 0, good_qualified = 0;
  json arm_list = json::array();
  for (const auto& a : run.manifest.arms) {
    json& row = rows[a.name];
    const rec::Verdict v = rec::parse_verdict(row.value("verdict", "not run"));
    if (known_broken(a.family, a.expected_rejection)) {
      if (rec::not_judged(v)) {
        row["caught"] = nullptr;
      } else {
        const bool caught =
            caught_as_declared(rec::to_string(v), row.value("check", ""), a.expected_rejection);
        row["caught"] = caught;
        broken_total++;
        broken_caught += caught;
      }
    } else if (!rec::not_judged(v)) {
      good_total++;
      good_qualified += v == rec::Verdict::qualified;
    }
    arm_list.push_back(row);
  }
  s["arms"] = arm_list;
  // Arms that declined the spec and arms skipped on this machine (no device for them), grouped
  // by their reason: the reports list them once, below the verdicts.
  s["declined"] = group_by_reason(arm_list, rec::Verdict::unsupported);
  s["skipped"] = group_by_reason(arm_list, rec::Verdict::skipped);
  s["headline"] = {{"in_contract_cases_passed", in_passed},
                   {"in_contract_cases", in_total},
                   {"in_contract_cases_skipped", in_skipped},
                   {"out_of_contract_refused", out_refused},
                   {"out_of_contract_cases", out_total},
                   {"broken_rejected", broken_caught},
                   {"broken_total", broken_total},
                   {"good_qualified", good_qualified},
                   {"good_total", good_total}};
  return not_adopted;
}

}  // namespace kq
