#include "report/summary.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include "decision/decide.hpp"
#include "decision/plausibility.hpp"
#include "qualify/expectation.hpp"
#include "report/light.hpp"
#include "report/samples.hpp"
#include "stats/stats.hpp"
#include "util/json_lines.hpp"

namespace kq {
namespace {

// The arms with this verdict, grouped by their reason (detail):
// [{"reason", "arms":[names]}], in the order of the reasons.
nlohmann::json group_by_reason(const nlohmann::json& arms, const std::string& verdict) {
  std::map<std::string, nlohmann::json> groups;
  for (const auto& a : arms)
    if (a.value("verdict", "") == verdict)
      groups[a.value("detail", "")].push_back(a.value("name", ""));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [why, names] : groups) list.push_back({{"reason", why}, {"arms", names}});
  return list;
}

}  // namespace

nlohmann::json summarize_run(const std::filesystem::path& dir) {
  using nlohmann::json;
  json manifest = json::object();
  {
    std::ifstream in(dir / "manifest.json");
    if (in) manifest = json::parse(in, nullptr, false);
    if (manifest.is_discarded()) manifest = json::object();
  }
  json s;
  s["run_dir"] = dir.string();
  s["op"] = manifest.value("op", "");
  s["spec_sha256"] = manifest.value("spec_sha256", "");
  s["machine"] = manifest.value("machine", json::object());
  s["kq"] = manifest.value("kq", json::object());
  s["started"] = manifest.value("started", "");
  const json spec = manifest.value("spec", json::object());
  const std::string baseline = spec.value("baseline", "");
  const double min_speedup = spec.value("min_speedup", 1.03);
  const double bytes_per_element = spec.value("bytes_per_element", 0.0);

  // Arms as the manifest lists them, with their verdicts.
  std::map<std::string, json> arms;
  std::vector<std::string> order;
  for (const auto& a : manifest.value("arms", json::array())) {
    std::string n = a.value("name", "");
    arms[n] = {{"name", n},
               {"family", a.value("family", "")},
               {"device", a.value("device", "")},
               {"expected_rejection", a.value("expected_rejection", "")},
               {"verdict", "not run"}};
    order.push_back(n);
  }
  int in_passed = 0, in_total = 0, out_refused = 0, out_total = 0;
  for (const auto& r : read_json_lines(dir / "qualification.jsonl")) {
    std::string type = r.value("type", ""), arm = r.value("arm", "");
    if (!arms.count(arm)) continue;
    if (type == "sanitizer") {
      arms[arm]["sanitizer"].push_back(r);
      continue;
    }
    if (r.contains("pass")) continue;  // records of sanitizer passes: summarised above
    if (type == "verdict") {
      for (const char* k : {"verdict", "check", "case", "detail", "counts"})
        if (r.contains(k)) arms[arm][k] = r[k];
    } else if (type == "case" && !known_broken(arms[arm].value("family", ""),
                                               arms[arm].value("expected_rejection", ""))) {
      bool in = r.value("in_contract", true);
      std::string res = r.value("result", "");
      if (res == "skipped") continue;
      (in ? in_total : out_total)++;
      if (in && res == "passed") in_passed++;
      if (!in && res == "refused") out_refused++;
    }
  }
  // The timing checks reject an arm that qualified: its output was wrong in the timing loop or
  // in a graph replay, or its work left the stream it was given. The first such record is its
  // verdict (a run written before these records existed says so with a failed recheck).
  const std::vector<json> round_records = read_json_lines(dir / "rounds.jsonl");
  std::map<std::string, json> timing_rejects;
  for (const auto& r : round_records) {
    const std::string type = r.value("type", ""), arm = r.value("arm", "");
    if (type == "timing_reject" && !timing_rejects.count(arm)) timing_rejects[arm] = r;
    if (type == "recheck" && !r.value("ok", true) && !timing_rejects.count(arm))
      timing_rejects[arm] = {{"check", "timing_output"},
                             {"size", r.value("size", std::int64_t{0})},
                             {"message", r.value("message", "")}};
  }
  for (const auto& [arm, r] : timing_rejects) {
    if (!arms.count(instance_arm(arm))) continue;
    json& a = arms[instance_arm(arm)];
    if (a.value("verdict", "") != "qualified") continue;
    a["verdict"] = "rejected";
    a["check"] = r.value("check", "");
    a["case"] = "timing/" + std::to_string(r.value("size", std::int64_t{0}));
    a["detail"] = r.value("message", "");
    a["rejected_while_timed"] = true;
  }

  // What each arm compiled (the artifacts stage's index).
  for (auto& [name, a] : arms) {
    std::ifstream in(dir / "artifacts" / name / "index.json");
    if (!in) continue;
    json index = json::parse(in, nullptr, false);
    if (index.is_discarded()) continue;
    json files = json::array();
    for (const auto& f : index.value("files", json::array())) files.push_back(f.value("name", ""));
    a["artifacts"] = {{"files", files}, {"sass", index.value("sass", "")}};
    // What an arm chose for each size (cuDNN: shaping, engine, knobs), timing sizes first.
    for (const char* f : {"timing-chosen.md", "chosen.md"}) {
      std::ifstream c(dir / "artifacts" / name / f);
      if (!c) continue;
      std::stringstream text;
      text << c.rdbuf();
      a["choice"] = text.str();
      break;
    }
  }
  int broken_total = 0, broken_caught = 0, good_total = 0, good_qualified = 0;
  json arm_list = json::array();
  for (const auto& n : order) {
    json& a = arms[n];
    const std::string v = a["verdict"];
    if (known_broken(a.value("family", ""), a.value("expected_rejection", ""))) {
      if (v == "not run" || v == "skipped" || v == "unsupported") {
        a["caught"] = nullptr;
      } else {
        broken_total++;
        bool caught =
            caught_as_declared(v, a.value("check", ""), a.value("expected_rejection", ""));
        a["caught"] = caught;
        broken_caught += caught;
      }
    } else if (v != "not run" && v != "skipped" && v != "unsupported") {
      good_total++;
      good_qualified += v == "qualified";
    }
    arm_list.push_back(a);
  }
  s["arms"] = arm_list;
  // Arms that declined the spec (supports() said unsupported) and arms skipped on this machine
  // (no device for them), grouped by their reason: the reports list them once, below the
  // verdicts.
  s["declined"] = group_by_reason(arm_list, "unsupported");
  s["skipped"] = group_by_reason(arm_list, "skipped");
  s["headline"] = {{"in_contract_cases_passed", in_passed},  {"in_contract_cases", in_total},
                   {"out_of_contract_refused", out_refused}, {"out_of_contract_cases", out_total},
                   {"broken_rejected", broken_caught},       {"broken_total", broken_total},
                   {"good_qualified", good_qualified},       {"good_total", good_total}};

  // Timing.
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> samples;
  std::map<std::int64_t, json> size_info;
  std::map<std::pair<std::int64_t, std::string>, json> rechecks, skips;
  bool timing_seen = false;
  const std::map<std::int64_t, Light> light = light_by_size(round_records);
  // The samples that count (report/samples.hpp): a round below 75% of the run's usual SM clock
  // ran throttled, one whose blocking kernel timed out is unheld: both are kept in
  // rounds.jsonl, counted, and left out of the statistics.
  const RunSamples selected = select_samples(round_records);
  s["sm_clock_mhz_median"] = selected.usual_clock_mhz;
  std::map<std::pair<std::int64_t, std::string>, int> throttled, unheld;
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> graph_samples, host_samples;
  for (const auto& [key, kept] : selected.by_key) {
    const auto& [arm, size, mode] = key;
    if (auto t = kept.left_out.find("throttled"); t != kept.left_out.end())
      throttled[{size, arm}] += t->second;
    if (auto u = kept.left_out.find("unheld"); u != kept.left_out.end())
      unheld[{size, arm}] += u->second;
    if (kept.seconds.empty()) continue;
    if (mode == "single") {
      samples[size][arm] = kept.seconds;
      if (!kept.host_seconds.empty()) host_samples[size][arm] = kept.host_seconds;
    } else if (mode == "graph") {
      graph_samples[size][arm] = kept.seconds;
    }
  }
  std::map<std::pair<std::int64_t, std::string>, json> profiles, graphs;
  std::map<std::int64_t, std::string> left_attached;  // CUPTI not detached after this size
  json notes = json::array();                         // what the timing said about an arm
  for (const auto& r : round_records) {
    timing_seen = true;
    std::string type = r.value("type", "");
    std::int64_t size = r.value("size", std::int64_t{0});
    if (type == "round") continue;  // selected above
    if (type == "size_end")
      size_info[size] = r;
    else if (type == "recheck")
      rechecks[{size, r.value("arm", "")}] = r;
    else if (type == "profile")
      profiles[{size, r.value("arm", "")}] = r;
    else if (type == "graph")
      graphs[{size, r.value("arm", "")}] = r;
    else if (type == "arm_skip")
      skips[{size, r.value("arm", "")}] = r;
    else if (type == "arm_note")
      notes.push_back(r);
    else if (type == "profiler_attached")
      left_attached[size] = r.value("reason", "");
    else if (type == "timing_stopped")
      s["timing_stopped"] = r.value("reason", "");
  }
  // Which device each arm runs on: the light (a device copy) and the speed-up against the
  // baseline describe only arms on the baseline's device. The decision gets the same context.
  ArmContext context;
  for (const auto& [name, a] : arms) context.devices[name] = a.value("device", "");
  for (const auto& [arm, r] : timing_rejects)
    context.not_adopted[arm] = "rejected while timed: " + r.value("check", "");
  double l2_bytes = 0;
  if (const json& gpus = s["machine"].value("gpus", json::array()); !gpus.empty())
    l2_bytes = gpus[0].value("l2_bytes", 0.0);
  json flags = json::array();
  json timing = json::array();
  for (const auto& [size, per_arm] : samples) {
    json row = {{"size", size}, {"bytes", bytes_per_element * static_cast<double>(size)}};
    if (size_info.count(size)) {
      row["rounds"] = size_info[size].value("rounds", 0);
      row["stopped_by"] = size_info[size].value("stopped_by", "");
    } else {
      row["stopped_by"] = "incomplete (the run stopped during this size)";
    }
    auto li = light.find(size);
    if (li != light.end()) row["light_gbps"] = li->second.gbps;
    // A smaller size's profile left CUPTI attached: this size's host times carry its overhead.
    if (auto la = left_attached.begin(); la != left_attached.end() && la->first < size)
      row["cupti_attached"] = la->second;
    json list = json::array();
    auto base = per_arm.find(baseline);
    for (const auto& [arm, v] : per_arm) {
      SampleStats st = summarize(v);
      json a = {{"arm", arm},    {"n", st.n},     {"median_s", st.median},      {"min_s", st.min},
                {"q1_s", st.q1}, {"q3_s", st.q3}, {"rel_noise", st.rel_noise()}};
      if (st.median > 0 && bytes_per_element > 0) {
        a["gbps"] = bytes_per_element * static_cast<double>(size) / st.median / 1e9;
      }
      if (a.contains("gbps") && li != light.end() && li->second.gbps > 0 &&
          context.device_of(arm) != "cpu")
        a["pct_light"] = 100.0 * a["gbps"].get<double>() / li->second.gbps;
      if (auto g = graph_samples[size].find(arm);
          g != graph_samples[size].end() && !g->second.empty())
        a["graph_median_s"] = summarize(g->second).median;
      if (auto h = host_samples[size].find(arm);
          h != host_samples[size].end() && !h->second.empty())
        a["host_median_s"] = summarize(h->second).median;
      if (auto t = throttled.find({size, arm}); t != throttled.end()) a["throttled"] = t->second;
      if (auto u = unheld.find({size, arm}); u != unheld.end()) a["unheld"] = u->second;
      if (auto p = profiles.find({size, arm}); p != profiles.end()) {
        json prof = p->second;
        prof.erase("type");
        prof.erase("arm");
        prof.erase("size");
        a["profile"] = prof;
      }
      if (base != per_arm.end() && arm != baseline && context.comparable(arm, baseline)) {
        SpeedupEstimate e =
            bootstrap_speedup(base->second, v, 2000, static_cast<std::uint64_t>(size));
        a["speedup"] = e.ratio;
        a["speedup_lo"] = e.lo;
        a["speedup_hi"] = e.hi;
      }
      if (auto it = rechecks.find({size, arm}); it != rechecks.end()) {
        a["recheck_ok"] = it->second.value("ok", false);
        if (it->second.contains("message")) a["recheck_message"] = it->second["message"];
        if (it->second.contains("checked")) a["checked"] = it->second["checked"];
      }
      TimedFacts facts;
      facts.device = context.device_of(arm);
      facts.size = size;
      facts.bytes = bytes_per_element * static_cast<double>(size);
      facts.median_s = st.median;
      facts.graph_median_s = a.value("graph_median_s", 0.0);
      facts.light_gbps = li != light.end() ? li->second.gbps : 0.0;
      facts.l2_bytes = l2_bytes;
      if (auto p = profiles.find({size, arm}); p != profiles.end()) facts.profile = &p->second;
      if (auto g = graphs.find({size, arm}); g != graphs.end()) {
        facts.graph = &g->second;
        a["graph_kernel_nodes"] = g->second.value("kernel_nodes", 0);
      }
      for (const Flag& f : plausibility_flags(facts)) {
        a["flags"].push_back({{"kind", f.kind}, {"message", f.message}});
        flags.push_back({{"arm", arm}, {"size", size}, {"kind", f.kind}, {"message", f.message}});
        if (!context.not_adopted.count(instance_arm(arm)))
          context.not_adopted[instance_arm(arm)] =
              f.title + " at " + std::to_string(size) + " elements";
      }
      list.push_back(a);
    }
    row["arms"] = list;
    // What the reports say under this size's heading, one line each.
    json size_notes = json::array();
    if (row.contains("cupti_attached"))
      size_notes.push_back("CUPTI stayed attached from a smaller size's profile (" +
                           row["cupti_attached"].get<std::string>() +
                           "): every CUDA call here paid its host overhead");
    for (const auto& a : list) {
      const std::string arm = a["arm"];
      if (a.value("throttled", 0) > 0)
        size_notes.push_back(arm + ": " + std::to_string(a.value("throttled", 0)) +
                             " sample(s) ran below 75% of the run's usual SM clock: kept in "
                             "rounds.jsonl, left out here");
      if (a.value("unheld", 0) > 0)
        size_notes.push_back(arm + ": " + std::to_string(a.value("unheld", 0)) +
                             " sample(s) outlasted the blocking kernel's hold while being "
                             "enqueued: kept in rounds.jsonl, left out here");
    }
    for (const auto& a : list)
      for (const auto& f : a.value("flags", json::array()))
        size_notes.push_back(a["arm"].get<std::string>() +
                             ": flagged, never adopted: " + f.value("message", ""));
    for (const auto& note : notes)
      if (note.value("size", std::int64_t{0}) == size)
        size_notes.push_back(note.value("arm", "") + ": " + note.value("note", ""));
    row["notes"] = size_notes;
    timing.push_back(row);
  }
  json skipped = json::array();
  for (const auto& [k, r] : skips) skipped.push_back(r);
  s["timing"] = timing;
  // The speed of light: a device-to-device copy timed in the same run (absent: not measured).
  json light_rows = json::array();
  for (const auto& [size, l] : light)
    light_rows.push_back(
        {{"size", size}, {"n", l.n}, {"gbps", l.gbps}, {"best_gbps", l.best_gbps}});
  s["light"] = {{"measured", !light.empty()}, {"per_size", light_rows}};
  s["timing_skips"] = skipped;
  s["flags"] = flags;
  s["timing_notes"] = notes;
  s["timing_ran"] = timing_seen;
  // An arm whose timing-loop output was wrong cannot win anything.
  auto decision_samples = samples;
  for (const auto& [key, r] : rechecks)
    if (!r.value("ok", false)) decision_samples[key.first].erase(key.second);
  for (const auto& [size, per_arm] : host_samples)
    for (const auto& [arm, v] : per_arm)
      if (!v.empty()) context.host_median_s[size][arm] = summarize(v).median;
  s["decision"] = decide(decision_samples, baseline, min_speedup, context);
  if (s.contains("timing_stopped"))
    s["decision"]["sentence"] =
        s["decision"]["sentence"].get<std::string>() + " The timing stage stopped early (" +
        s["timing_stopped"].get<std::string>() + "): the sizes it had not finished are missing.";
  return s;
}

}  // namespace kq
