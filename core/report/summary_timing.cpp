#include <algorithm>

#include "decision/plausibility.hpp"
#include "report/summary_parts.hpp"
#include "stats/stats.hpp"

namespace kq {
namespace {

using nlohmann::json;
using SizeArm = std::pair<std::int64_t, std::string>;
using PerSize = std::map<std::int64_t, std::map<std::string, std::vector<double>>>;

// The run's timing records, indexed by size and arm.
struct TimingIndex {
  PerSize single, graph, host;  // counted samples' seconds (host: the enqueue alone)
  std::map<SizeArm, int> throttled, unheld;
  std::map<std::int64_t, const rec::SizeEnd*> size_end;
  std::map<SizeArm, const rec::Recheck*> rechecks;
  std::map<SizeArm, const rec::Profile*> profiles;
  std::map<SizeArm, const rec::GraphInfo*> graphs;
  std::map<SizeArm, const rec::ArmSkip*> skips;
  std::map<std::int64_t, std::string> left_attached;  // CUPTI not detached after this size
};

TimingIndex index_timing(const RunData& run) {
  TimingIndex x;
  for (const auto& [key, kept] : run.samples) {
    const auto& [arm, size, mode] = key;
    if (auto t = kept.left_out.find("throttled"); t != kept.left_out.end())
      x.throttled[{size, arm}] += t->second;
    if (auto u = kept.left_out.find("unheld"); u != kept.left_out.end())
      x.unheld[{size, arm}] += u->second;
    if (kept.seconds.empty()) continue;
    if (mode == "single") {
      x.single[size][arm] = kept.seconds;
      if (!kept.host_seconds.empty()) x.host[size][arm] = kept.host_seconds;
    } else if (mode == "graph") {
      x.graph[size][arm] = kept.seconds;
    }
  }
  for (const auto& r : run.size_ends) x.size_end[r.size] = &r;
  for (const auto& r : run.rechecks) x.rechecks[{r.size, r.arm}] = &r;
  for (const auto& r : run.profiles) x.profiles[{r.size, r.arm}] = &r;
  for (const auto& r : run.graphs) x.graphs[{r.size, r.arm}] = &r;
  for (const auto& r : run.skips) x.skips[{r.size, r.arm}] = &r;
  for (const auto& r : run.attached) x.left_attached[r.size] = r.reason;
  return x;
}

// What a size's row shares with its arms' cells.
struct SizeFacts {
  std::int64_t size = 0;
  double bytes = 0;       // moved by one call
  double light_gbps = 0;  // 0: no copy counted at this size
  double l2_bytes = 0;
  const std::map<std::string, std::vector<double>>* single = nullptr;
};

// The speed-up of `v` against `against`'s samples at this size into a[key], a[key_lo],
// a[key_hi] (the median ratio and its 95% bootstrap interval, as the decision computes it):
// only for another arm, on the same device, timed at this size.
void speedup_against(const std::string& against, const std::string& arm,
                     const std::vector<double>& v, const SizeFacts& f, const ArmContext& context,
                     const std::string& key, json& a) {
  if (against.empty() || arm == against || !context.comparable(arm, against)) return;
  auto base = f.single->find(against);
  if (base == f.single->end()) return;
  const SpeedupEstimate e =
      bootstrap_speedup(base->second, v, 2000, static_cast<std::uint64_t>(f.size));
  a[key] = e.ratio;
  a[key + "_lo"] = e.lo;
  a[key + "_hi"] = e.hi;
}

// One arm's cell of a size's row: statistics, bandwidth, speed-ups against the eager arm and
// the baseline, the timing checks' verdict and the plausibility flags (which also keep it from
// being adopted).
json arm_cell(const std::string& arm, const std::vector<double>& v, const SizeFacts& f,
              const TimingIndex& x, const std::string& baseline, ArmContext& context, json& flags) {
  const SampleStats st = summarize(v);
  json a = {{"arm", arm},    {"n", st.n},     {"median_s", st.median},      {"min_s", st.min},
            {"q1_s", st.q1}, {"q3_s", st.q3}, {"rel_noise", st.rel_noise()}};
  const SizeArm key{f.size, arm};
  if (st.median > 0 && f.bytes > 0) a["gbps"] = f.bytes / st.median / 1e9;
  if (a.contains("gbps") && f.light_gbps > 0 && context.device_of(arm) != "cpu")
    a["pct_light"] = 100.0 * a["gbps"].get<double>() / f.light_gbps;
  if (auto g = x.graph.find(f.size); g != x.graph.end())
    if (auto ga = g->second.find(arm); ga != g->second.end())
      a["graph_median_s"] = summarize(ga->second).median;
  if (auto h = x.host.find(f.size); h != x.host.end())
    if (auto ha = h->second.find(arm); ha != h->second.end())
      a["host_median_s"] = summarize(ha->second).median;
  if (auto t = x.throttled.find(key); t != x.throttled.end()) a["throttled"] = t->second;
  if (auto u = x.unheld.find(key); u != x.unheld.end()) a["unheld"] = u->second;
  const rec::Profile* profile = x.profiles.count(key) ? x.profiles.at(key) : nullptr;
  if (profile) a["profile"] = profile->body;
  speedup_against(context.eager, arm, v, f, context, "eager_speedup", a);
  speedup_against(baseline, arm, v, f, context, "speedup", a);
  if (auto it = x.rechecks.find(key); it != x.rechecks.end()) {
    a["recheck_ok"] = it->second->ok;
    if (it->second->message) a["recheck_message"] = *it->second->message;
    if (it->second->checked) a["checked"] = *it->second->checked;
  }
  TimedFacts facts;
  facts.device = context.device_of(arm);
  facts.size = f.size;
  facts.bytes = f.bytes;
  facts.median_s = st.median;
  facts.graph_median_s = a.value("graph_median_s", 0.0);
  facts.light_gbps = f.light_gbps;
  facts.l2_bytes = f.l2_bytes;
  if (profile) facts.profile = &profile->body;
  if (auto g = x.graphs.find(key); g != x.graphs.end()) {
    facts.graph = g->second;
    a["graph_kernel_nodes"] = g->second->kernel_nodes;
  }
  for (const Flag& fl : plausibility_flags(facts)) {
    a["flags"].push_back({{"kind", fl.kind}, {"message", fl.message}});
    flags.push_back({{"arm", arm}, {"size", f.size}, {"kind", fl.kind}, {"message", fl.message}});
    context.not_adopted.emplace(instance_arm(arm),
                                fl.title + " at " + std::to_string(f.size) + " elements");
  }
  return a;
}

// What the reports say under a size's heading, one line each.
json size_notes(const json& row, const json& cells, const RunData& run, std::int64_t size) {
  json notes = json::array();
  if (row.contains("cupti_attached"))
    notes.push_back("CUPTI stayed attached from a smaller size's profile (" +
                    row["cupti_attached"].get<std::string>() +
                    "): every CUDA call here paid its host overhead");
  for (const auto& a : cells) {
    const std::string arm = a["arm"];
    if (a.value("throttled", 0) > 0)
      notes.push_back(arm + ": " + std::to_string(a.value("throttled", 0)) +
                      " sample(s) ran below 75% of the run's usual SM clock: kept in "
                      "rounds.jsonl, left out here");
    if (a.value("unheld", 0) > 0)
      notes.push_back(arm + ": " + std::to_string(a.value("unheld", 0)) +
                      " sample(s) outlasted the blocking kernel's hold while being "
                      "enqueued: kept in rounds.jsonl, left out here");
  }
  for (const auto& a : cells)
    for (const auto& f : a.value("flags", json::array()))
      notes.push_back(a["arm"].get<std::string>() +
                      ": flagged, never adopted: " + f.value("message", ""));
  for (const auto& n : run.notes)
    if (n.size == size) notes.push_back(n.arm + ": " + n.note);
  return notes;
}

// The run's baseline (or eager arm): the first of the spec's list that qualified and was timed,
// and why each one before it was passed over: {"list", "used" ("" for none),
// "passed_over":[{arm, why}]}.
json choose_arm(const std::vector<std::string>& list, const RunData& run, const TimingIndex& x,
                const std::map<std::string, std::string>& rejected_while_timed) {
  json choice = {{"list", list}, {"used", ""}, {"passed_over", json::array()}};
  for (const auto& b : list) {
    std::string why;
    const rec::VerdictRecord* v = run.verdict_of(b);
    if (!run.manifest.arm(b))
      why = "not among this run's arms";
    else if (!v || v->verdict != rec::Verdict::qualified)
      why = "not qualified (" +
            std::string(rec::to_string(v ? v->verdict : rec::Verdict::not_run)) + ")";
    else if (rejected_while_timed.count(b))
      why = "rejected while timed";
    else if (std::none_of(x.single.begin(), x.single.end(),
                          [&](const auto& size) { return size.second.count(b) > 0; }))
      why = "not timed";
    if (why.empty()) {
      choice["used"] = b;
      break;
    }
    choice["passed_over"].push_back({{"arm", b}, {"why", why}});
  }
  return choice;
}

// "nvrtc_jit not among this run's arms; torch_compile not qualified (skipped)": the arms a
// choice passed over, and why.
std::string passed_over_text(const json& choice) {
  std::string over;
  for (const auto& p : choice["passed_over"])
    over += (over.empty() ? "" : "; ") + p["arm"].get<std::string>() + " " +
            p["why"].get<std::string>();
  return over;
}

// The decision's sentence with what it must say about the choice of baseline: nothing when
// the first was used; which was used and why the ones before it were not; or, none timed, why
// none of them was.
std::string with_baseline_choice(const std::string& sentence, const json& choice,
                                 const std::string& used) {
  if (choice["passed_over"].empty()) return sentence;
  const std::string over = passed_over_text(choice);
  if (!choice["used"].get<std::string>().empty())
    return sentence + " The baseline is " + used + ", the first of the spec's that was timed (" +
           over + ").";
  if (choice["list"].size() < 2) return sentence;
  const std::string one = "No decision: the baseline arm " + used + " was not timed in this run.";
  const std::string none = "No decision: none of the spec's baselines was timed (" + over + ").";
  return sentence.rfind(one, 0) == 0 ? none + sentence.substr(one.size()) : sentence + " " + none;
}

// What the sentence must add about the eager arm: nothing when the spec names none or its first
// was used; which was used and why the ones before it were not; or that there is no speed-up
// against eager, and why.
std::string eager_choice_text(const json& choice) {
  if (choice["passed_over"].empty()) return "";
  const std::string over = passed_over_text(choice);
  if (const std::string used = choice["used"]; !used.empty())
    return " The eager arm is " + used + ", the first of the spec's that was timed (" + over + ").";
  if (choice["list"].size() < 2) return " No speed-up against eager: " + over + ".";
  return " No speed-up against eager: none of the spec's eager arms was timed (" + over + ").";
}

json size_row(std::int64_t size, const std::map<std::string, std::vector<double>>& per_arm,
              const RunData& run, const TimingIndex& x, ArmContext& context, json& flags,
              const std::string& baseline) {
  SizeFacts f;
  f.size = size;
  f.bytes = run.manifest.bytes_per_element * static_cast<double>(size);
  f.single = &per_arm;
  if (const json& gpus = run.manifest.machine.value("gpus", json::array()); !gpus.empty())
    f.l2_bytes = gpus[0].value("l2_bytes", 0.0);
  json row = {{"size", size}, {"bytes", f.bytes}};
  if (auto e = x.size_end.find(size); e != x.size_end.end()) {
    row["rounds"] = e->second->rounds;
    row["stopped_by"] = e->second->stopped_by;
  } else {
    row["stopped_by"] = "incomplete (the run stopped during this size)";
  }
  if (auto li = run.light.find(size); li != run.light.end()) {
    row["light_gbps"] = li->second.gbps;
    f.light_gbps = li->second.gbps;
  }
  if (auto fl = run.floor_samples_s.find(size); fl != run.floor_samples_s.end())
    row["floor_s"] = summarize(fl->second).median;
  if (auto hl = run.host_light.find(size); hl != run.host_light.end())
    row["host_light_gbps"] = hl->second.gbps;
  // A smaller size's profile left CUPTI attached: this size's host times carry its overhead.
  if (auto la = x.left_attached.begin(); la != x.left_attached.end() && la->first < size)
    row["cupti_attached"] = la->second;
  json cells = json::array();
  for (const auto& [arm, v] : per_arm)
    cells.push_back(arm_cell(arm, v, f, x, baseline, context, flags));
  row["arms"] = cells;
  row["notes"] = size_notes(row, cells, run, size);
  return row;
}

}  // namespace

void summarize_timing(const RunData& run, const std::map<std::string, std::string>& not_adopted,
                      json& s) {
  const TimingIndex x = index_timing(run);
  if (run.stopped) s["timing_stopped"] = run.stopped->reason;
  s["sm_clock_mhz_median"] = run.usual_clock_mhz;
  // Which device each arm runs on: the light (a device copy) and the speed-up against the
  // baseline describe only arms on the baseline's device. The decision gets the same context.
  ArmContext context;
  for (const auto& a : run.manifest.arms) context.devices[a.name] = a.device;
  context.not_adopted = not_adopted;
  const json choice = choose_arm(run.manifest.baselines, run, x, not_adopted);
  s["baseline_choice"] = choice;
  // The eager arm, chosen the same way; runs whose spec names none (older runs too) have none.
  json eager_choice;
  if (!run.manifest.eager.empty()) {
    eager_choice = choose_arm(run.manifest.eager, run, x, not_adopted);
    s["eager_choice"] = eager_choice;
    context.eager = eager_choice["used"].get<std::string>();
  }
  // With none of them timed, the first is named (the decision says it was not timed).
  const std::string baseline =
      !choice["used"].get<std::string>().empty()
          ? choice["used"].get<std::string>()
          : (run.manifest.baselines.empty() ? std::string() : run.manifest.baselines[0]);
  json flags = json::array(), timing = json::array();
  for (const auto& [size, per_arm] : x.single)
    timing.push_back(size_row(size, per_arm, run, x, context, flags, baseline));
  s["timing"] = timing;
  // The speed of light: a device-to-device copy timed in the same run (absent: not measured).
  json light_rows = json::array();
  for (const auto& [size, l] : run.light)
    light_rows.push_back(
        {{"size", size}, {"n", l.n}, {"gbps", l.gbps}, {"best_gbps", l.best_gbps}});
  s["light"] = {{"measured", !run.light.empty()}, {"per_size", light_rows}};
  json skipped = json::array();
  for (const auto& [key, r] : x.skips) skipped.push_back(*r);
  s["timing_skips"] = skipped;
  s["flags"] = flags;
  json notes = json::array();
  for (const auto& n : run.notes) notes.push_back(n);
  s["timing_notes"] = notes;
  s["timing_ran"] = run.timing_ran;

  // An arm whose timing-loop output was wrong cannot win anything.
  PerSize decision_samples = x.single;
  for (const auto& [key, r] : x.rechecks)
    if (!r->ok) decision_samples[key.first].erase(key.second);
  for (const auto& [size, per_arm] : x.host)
    for (const auto& [arm, v] : per_arm) context.host_median_s[size][arm] = summarize(v).median;
  s["decision"] = decide(decision_samples, baseline, run.manifest.min_speedup, context);
  s["decision"]["sentence"] = with_baseline_choice(s["decision"]["sentence"], choice, baseline);
  if (!eager_choice.is_null())
    s["decision"]["sentence"] =
        s["decision"]["sentence"].get<std::string>() + eager_choice_text(eager_choice);
  if (run.stopped)
    s["decision"]["sentence"] = s["decision"]["sentence"].get<std::string>() +
                                " The timing stage stopped early (" + run.stopped->reason +
                                "): the sizes it had not finished are missing.";
}

}  // namespace kq
