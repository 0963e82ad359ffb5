#include <algorithm>

#include "decision/decide.hpp"
#include "decision/plausibility.hpp"
#include "decision/sentence.hpp"
#include "stats/stats.hpp"
#include "summary/summarize_parts.hpp"

namespace kq {
namespace {

using SizeArm = std::pair<std::int64_t, std::string>;

// The run's timing records, indexed by size and arm.
struct TimingIndex {
  TimedSamples single, graph, host;  // counted samples' seconds (host: the enqueue alone)
  std::map<SizeArm, int> throttled, unheld;
  std::map<std::int64_t, const rec::SizeEnd*> size_end;
  std::map<SizeArm, const rec::Recheck*> rechecks;
  std::map<SizeArm, const rec::Profile*> profiles;
  std::map<SizeArm, const rec::GraphInfo*> graphs;
  std::map<SizeArm, const rec::ArmSkip*> skips;
  std::map<std::int64_t, std::string> left_attached;  // CUPTI not detached after this size
  std::map<std::int64_t, const rec::SizeStart*> size_start;
};

TimingIndex index_timing(const RunData& run) {
  TimingIndex x;
  for (const auto& [key, kept] : run.samples) {
    const auto& [arm, size, mode] = key;
    if (auto t = kept.left_out.find(to_string(LeftOut::throttled)); t != kept.left_out.end())
      x.throttled[{size, arm}] += t->second;
    if (auto u = kept.left_out.find(to_string(LeftOut::unheld)); u != kept.left_out.end())
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
  for (const auto& r : run.size_starts) x.size_start[r.size] = &r;
  for (const auto& r : run.rechecks) x.rechecks[{r.size, r.arm}] = &r;
  for (const auto& r : run.profiles) x.profiles[{r.size, r.arm}] = &r;
  for (const auto& r : run.graphs) x.graphs[{r.size, r.arm}] = &r;
  for (const auto& r : run.skips) x.skips[{r.size, r.arm}] = &r;
  for (const auto& r : run.attached) x.left_attached[r.size] = r.reason;
  return x;
}

template <class Map, class Key>
auto find_or_null(const Map& m, const Key& k) -> decltype(&m.begin()->second) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

// What a size's row shares with its arms' cells.
struct SizeFacts {
  std::int64_t size = 0;
  std::string where;          // "4096 elements" or, format 2, the point "M=32768,N=4096"
  double bytes = 0;           // moved by one call
  double flops = 0;           // format 2: one call's, from the statements
  double light_gbps = 0;      // 0: no copy counted at this size
  double compute_tflops = 0;  // 0: no vendor GEMM counted at this size
  double l2_bytes = 0;
  const std::map<std::string, std::vector<double>>* single = nullptr;
};

// The speed-up of `v` against `against`'s samples at this size (the median ratio and its 95%
// bootstrap interval, as the decision computes it): only for another arm, on the same device,
// timed at this size.
std::optional<Speedup> speedup_against(const std::string& against, const std::string& arm,
                                       const std::vector<double>& v, const SizeFacts& f,
                                       const ArmContext& context) {
  if (against.empty() || arm == against || !context.comparable(arm, against)) return std::nullopt;
  // An isolated arm against its own worker's reference; a reference's instance there against
  // the clean worker's (how much the isolated worker slowed it).
  std::string reference = context.in_worker(against, arm);
  if (reference == arm) reference = against;
  auto base = f.single->find(reference);
  if (base == f.single->end()) return std::nullopt;
  const SpeedupEstimate e =
      bootstrap_speedup(base->second, v, 2000, static_cast<std::uint64_t>(f.size));
  return Speedup{e.ratio, e.lo, e.hi};
}

// The plausibility flags of an arm's cell, which also keep it from being adopted.
void flag_cell(TimingCell& a, const SizeFacts& f, const TimingIndex& x, ArmContext& context,
               std::vector<FlagRow>& flags) {
  const SizeArm key{f.size, a.arm};
  TimedFacts facts;
  facts.device = context.device_of(a.arm);
  facts.size = f.size;
  facts.where = f.where;
  facts.bytes = f.bytes;
  facts.median_s = a.median_s;
  facts.graph_median_s = a.graph_median_s.value_or(0.0);
  facts.light_gbps = f.light_gbps;
  facts.flops = f.flops;
  facts.compute_tflops = f.compute_tflops;
  facts.l2_bytes = f.l2_bytes;
  if (const auto* p = find_or_null(x.profiles, key)) facts.profile = &(*p)->body;
  if (const auto* g = find_or_null(x.graphs, key)) {
    facts.graph = *g;
    a.graph_kernel_nodes = (*g)->kernel_nodes;
  }
  for (const Flag& fl : plausibility_flags(facts)) {
    a.flags.push_back({fl.kind, fl.message});
    flags.push_back({a.arm, f.size, fl.kind, fl.message});
    context.not_adopted.emplace(instance_arm(a.arm), fl.title + " at " + f.where);
  }
}

// One arm's cell of a size's row: statistics, bandwidth, speed-ups against the eager arm and
// the baseline, the timing checks' verdict and the plausibility flags.
TimingCell arm_cell(const std::string& arm, const std::vector<double>& v, const SizeFacts& f,
                    const TimingIndex& x, const std::string& baseline, ArmContext& context,
                    std::vector<FlagRow>& flags) {
  const SampleStats st = summarize(v);
  TimingCell a;
  a.arm = arm;
  a.n = st.n;
  a.median_s = st.median;
  a.min_s = st.min;
  a.q1_s = st.q1;
  a.q3_s = st.q3;
  a.rel_noise = st.rel_noise();
  const SizeArm key{f.size, arm};
  if (st.median > 0 && f.bytes > 0) a.gbps = f.bytes / st.median / 1e9;
  if (st.median > 0 && f.flops > 0) a.tflops = f.flops / st.median / 1e12;
  if (a.gbps && f.light_gbps > 0 && context.device_of(arm) != "cpu")
    a.pct_light = 100.0 * *a.gbps / f.light_gbps;
  if (a.tflops && f.compute_tflops > 0 && context.device_of(arm) != "cpu")
    a.pct_compute = 100.0 * *a.tflops / f.compute_tflops;
  if (const auto* g = find_or_null(x.graph, f.size))
    if (const auto* ga = find_or_null(*g, arm)) a.graph_median_s = summarize(*ga).median;
  if (const auto* h = find_or_null(x.host, f.size))
    if (const auto* ha = find_or_null(*h, arm)) a.host_median_s = summarize(*ha).median;
  if (const int* t = find_or_null(x.throttled, key)) a.throttled = *t;
  if (const int* u = find_or_null(x.unheld, key)) a.unheld = *u;
  if (const auto* p = find_or_null(x.profiles, key)) a.profile = (*p)->body.get<KernelProfile>();
  a.eager_speedup = speedup_against(context.eager, arm, v, f, context);
  a.speedup = speedup_against(baseline, arm, v, f, context);
  if (const auto* r = find_or_null(x.rechecks, key)) {
    a.recheck_ok = (*r)->ok;
    a.recheck_message = (*r)->message;
    a.checked = (*r)->checked;
  }
  flag_cell(a, f, x, context, flags);
  return a;
}

// What the reports say under a size's heading, one line each.
std::vector<std::string> size_notes(const TimingRow& row, const RunData& run) {
  std::vector<std::string> notes;
  if (row.cupti_attached)
    notes.push_back("CUPTI stayed attached from a smaller size's profile (" + *row.cupti_attached +
                    "): every CUDA call here paid its host overhead");
  for (const TimingCell& a : row.arms) {
    if (a.throttled.value_or(0) > 0)
      notes.push_back(a.arm + ": " + std::to_string(*a.throttled) +
                      " sample(s) ran below 75% of the run's usual SM clock: kept in "
                      "rounds.jsonl, left out here");
    if (a.unheld.value_or(0) > 0)
      notes.push_back(a.arm + ": " + std::to_string(*a.unheld) +
                      " sample(s) outlasted the blocking kernel's hold while being "
                      "enqueued: kept in rounds.jsonl, left out here");
  }
  for (const TimingCell& a : row.arms)
    for (const FlagNote& f : a.flags)
      notes.push_back(a.arm + ": flagged, never adopted: " + f.message);
  for (const auto& n : run.notes)
    if (n.size == row.size) notes.push_back(n.arm + ": " + n.note);
  return notes;
}

// The roofline of a point: the ridge (the vendor GEMM's FLOP/s over the copy's byte/s, both
// measured in this run) and its light: compute where the point's FLOPs per byte exceed the
// ridge, else memory.
void set_roofline(const SizeFacts& f, TimingRow& row) {
  if (f.compute_tflops <= 0 || f.light_gbps <= 0 || f.bytes <= 0 || f.flops <= 0) return;
  row.ridge = f.compute_tflops * 1e12 / (f.light_gbps * 1e9);
  row.bound = f.flops / f.bytes > *row.ridge ? "compute" : "memory";
}

TimingRow size_row(std::int64_t size, const std::map<std::string, std::vector<double>>& per_arm,
                   const RunData& run, const RunSummary& s, const TimingIndex& x,
                   ArmContext& context, std::vector<FlagRow>& flags, const std::string& baseline) {
  SizeFacts f;
  f.size = size;
  f.where = std::to_string(size) + " elements";
  f.bytes = run.manifest.bytes_per_element * static_cast<double>(size);
  TimingRow row;
  // Format 2: the point, and the bytes and FLOPs the stage counted for it.
  if (const auto* st = find_or_null(x.size_start, size); st && (*st)->point) {
    row.point = f.where = *(*st)->point;
    f.bytes = (*st)->bytes.value_or(0);
    f.flops = (*st)->flops.value_or(0);
    if (f.flops > 0) row.flops = f.flops;
  }
  f.single = &per_arm;
  if (!s.machine.gpus.empty()) f.l2_bytes = s.machine.gpus[0].l2_bytes;
  row.size = size;
  row.bytes = f.bytes;
  if (const auto* e = find_or_null(x.size_end, size)) {
    row.rounds = (*e)->rounds;
    row.stopped_by = (*e)->stopped_by;
  } else {
    row.stopped_by = "incomplete (the run stopped during this size)";
  }
  if (const Light* li = find_or_null(run.light, size)) {
    row.light_gbps = li->gbps;
    f.light_gbps = li->gbps;
  }
  if (const ComputeLight* cl = find_or_null(run.compute_light, size)) {
    row.compute_light_tflops = f.compute_tflops = cl->tflops;
    row.compute_light_what = cl->what;
    set_roofline(f, row);
  }
  if (const auto* fl = find_or_null(run.floor_samples_s, size)) row.floor_s = summarize(*fl).median;
  if (const Light* hl = find_or_null(run.host_light, size)) row.host_light_gbps = hl->gbps;
  // A smaller size's profile left CUPTI attached: this size's host times carry its overhead.
  if (auto la = x.left_attached.begin(); la != x.left_attached.end() && la->first < size)
    row.cupti_attached = la->second;
  for (const auto& [arm, v] : per_arm)
    row.arms.push_back(arm_cell(arm, v, f, x, baseline, context, flags));
  row.notes = size_notes(row, run);
  return row;
}

// Why `arm` cannot be the run's baseline (or eager arm), or "" when it can.
std::string why_not_reference(const std::string& arm, const RunData& run, const TimingIndex& x,
                              const std::map<std::string, std::string>& rejected_while_timed) {
  const rec::VerdictRecord* v = run.verdict_of(arm);
  if (!run.manifest.arm(arm)) return "not among this run's arms";
  if (!v || v->verdict != rec::Verdict::qualified)
    return "not qualified (" + std::string(rec::to_string(v ? v->verdict : rec::Verdict::not_run)) +
           ")";
  if (rejected_while_timed.count(arm)) return "rejected while timed";
  if (std::none_of(x.single.begin(), x.single.end(),
                   [&](const auto& size) { return size.second.count(arm) > 0; }))
    return "not timed";
  return "";
}

std::vector<LightRow> light_rows(const RunData& run) {
  std::vector<LightRow> rows;
  for (const auto& [size, l] : run.light) rows.push_back({size, l.n, l.gbps, l.best_gbps});
  return rows;
}

}  // namespace

void summarize_timing(const RunData& run, const std::map<std::string, std::string>& not_adopted,
                      RunSummary& s) {
  const TimingIndex x = index_timing(run);
  if (run.stopped) s.timing_stopped = run.stopped->reason;
  s.sm_clock_mhz_median = run.usual_clock_mhz;
  // Which device each arm runs on: the light (a device copy) and the speed-up against the
  // baseline describe only arms on the baseline's device. The decision gets the same context.
  ArmContext context;
  for (const auto& a : run.manifest.arms) context.devices[a.name] = a.device;
  context.not_adopted = not_adopted;
  context.worker_of = run.worker_of;
  auto why_not = [&](const std::string& arm) {
    return why_not_reference(arm, run, x, not_adopted);
  };
  const ArmChoice baseline_choice = choose_arm(run.manifest.baselines, why_not);
  // The eager arm, chosen the same way; runs whose spec names none (older runs too) have none.
  std::optional<ArmChoice> eager_choice;
  if (!run.manifest.eager.empty()) {
    eager_choice = choose_arm(run.manifest.eager, why_not);
    context.eager = eager_choice->used;
  }
  // With none of them timed, the first is named (the decision says it was not timed).
  const std::string baseline =
      !baseline_choice.used.empty()
          ? baseline_choice.used
          : (run.manifest.baselines.empty() ? std::string() : run.manifest.baselines[0]);
  // The isolated workers' references and controls against the clean worker's: a disturbed
  // worker's arms are never adopted.
  std::vector<std::string> references;
  for (const std::string& r : {baseline, context.eager})
    if (!r.empty()) references.push_back(r);
  s.workers = summarize_workers(run, references, context.not_adopted);
  for (const auto& [size, per_arm] : x.single)
    s.timing.push_back(size_row(size, per_arm, run, s, x, context, s.flags, baseline));
  // The speed of light: a device-to-device copy timed in the same run (absent: not measured).
  s.light = {!run.light.empty(), light_rows(run)};
  for (const auto& [key, r] : x.skips) s.timing_skips.push_back(*r);
  s.timing_notes = run.notes;
  s.timing_ran = run.timing_ran;

  // An arm whose timing-loop output was wrong cannot win anything.
  TimedSamples decision_samples = x.single;
  for (const auto& [key, r] : x.rechecks)
    if (!r->ok) decision_samples[key.first].erase(key.second);
  for (const auto& [size, per_arm] : x.host)
    for (const auto& [arm, v] : per_arm) context.host_median_s[size][arm] = summarize(v).median;
  s.decision = decide(decision_samples, baseline, run.manifest.min_speedup, context);
  s.decision.baseline_choice = baseline_choice;
  s.decision.eager_choice = eager_choice;
  SentenceFacts facts{context.device_of(baseline), s.timing_stopped, {}};
  for (const TimingRow& row : s.timing)
    if (row.point) facts.points[row.size] = *row.point;
  s.decision.sentence = decision_sentence(s.decision, facts);
}

}  // namespace kq
