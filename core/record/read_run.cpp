#include <fstream>
#include <functional>
#include <tuple>

#include "record/run_data.hpp"
#include "stats/stats.hpp"

namespace kq {
namespace {

using nlohmann::json;

// Calls `take(record)` for each line of a JSON-lines file. A line that is not JSON, or a record
// `take` cannot read, is a problem named by file and line; a torn last line (a killed writer)
// is not.
void each_line(const std::filesystem::path& file, std::vector<std::string>& problems,
               const std::function<void(const json&)>& take) {
  std::ifstream in(file);
  std::string line, next;
  int number = 0;
  bool more = static_cast<bool>(std::getline(in, line));
  while (more) {
    ++number;
    more = static_cast<bool>(std::getline(in, next));
    const std::string where = file.filename().string() + " line " + std::to_string(number);
    if (!line.empty()) {
      json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) {
        if (more) problems.push_back(where + ": not JSON");
      } else {
        try {
          take(j);
        } catch (const std::exception& e) {
          problems.push_back(where + ": " + e.what());
        }
      }
    }
    line.swap(next);
  }
}

template <class R>
bool take_as(const json& j, std::vector<R>& into) {
  if (!rec::is<R>(j)) return false;
  into.push_back(j.get<R>());
  return true;
}

Manifest read_manifest(const std::filesystem::path& file, std::vector<std::string>& problems) {
  Manifest m;
  std::ifstream in(file);
  if (!in) return m;
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    problems.push_back(file.filename().string() + ": not a JSON object");
    return m;
  }
  try {
    m.raw = j;
    m.schema_version = j.value("schema_version", 1);
    m.op = j.value("op", "");
    m.spec_sha256 = j.value("spec_sha256", "");
    m.started = j.value("started", "");
    m.machine = j.value("machine", json::object());
    m.kq = j.value("kq", json::object());
    m.load_errors = j.value("load_errors", json::array());
    m.plugin_environment = j.value("plugin_environment", json::object());
    const json spec = j.value("spec", json::object());
    m.baselines = spec.value("baselines", std::vector<std::string>{});
    if (m.baselines.empty() && spec.contains("baseline"))
      m.baselines.push_back(spec.value("baseline", ""));
    m.eager = spec.value("eager", std::vector<std::string>{});
    m.min_speedup = spec.value("min_speedup", 1.03);
    m.bytes_per_element = spec.value("bytes_per_element", 0.0);
    for (const auto& a : j.value("arms", json::array())) {
      ManifestArm arm{a.value("name", ""),
                      a.value("family", ""),
                      a.value("device", ""),
                      a.value("expected_rejection", ""),
                      {}};
      for (const auto& s : a.value("sources", json::array()))
        arm.sources.push_back(s.value("path", "") + " " + s.value("sha256", ""));
      m.arms.push_back(std::move(arm));
    }
  } catch (const std::exception& e) {
    problems.push_back(file.filename().string() + ": " + e.what());
  }
  return m;
}

void read_qualification(RunData& run) {
  each_line(run.dir / "qualification.jsonl", run.problems, [&](const json& j) {
    if (j.contains("pass")) return;  // a compute-sanitizer pass: its finding is summed up
    take_as(j, run.cases) || take_as(j, run.verdicts) || take_as(j, run.sanitizer);
  });
}

// Records after an isolated worker's worker_start: its controls, sizes and end go to its
// WorkerTiming, its arms' records to the run's lists.
bool take_isolated(const json& j, WorkerTiming& w) {
  if (rec::is<rec::TimingStopped>(j)) {
    w.stopped = j.get<rec::TimingStopped>();
    return true;
  }
  return take_as(j, w.light_samples) || take_as(j, w.floor_samples) || take_as(j, w.size_starts) ||
         take_as(j, w.size_ends);
}

void read_rounds(RunData& run) {
  WorkerTiming* isolated = nullptr;  // the worker whose records these are; nullptr: the clean one
  each_line(run.dir / "rounds.jsonl", run.problems, [&](const json& j) {
    run.timing_ran = true;
    if (rec::is<rec::WorkerStart>(j)) {
      auto start = j.get<rec::WorkerStart>();
      isolated = nullptr;
      if (start.label.empty()) return;
      for (const auto& a : start.arms) run.worker_of[a] = start.label;
      for (const auto& a : start.references) run.worker_of[a] = start.label;
      run.isolated.push_back({});
      isolated = &run.isolated.back();
      isolated->start = std::move(start);
      return;
    }
    if (isolated && take_isolated(j, *isolated)) return;
    if (rec::is<rec::TimingStopped>(j)) {
      run.stopped = j.get<rec::TimingStopped>();
      return;
    }
    take_as(j, run.rounds) || take_as(j, run.light_samples) || take_as(j, run.floor_samples) ||
        take_as(j, run.size_starts) || take_as(j, run.size_ends) || take_as(j, run.skips) ||
        take_as(j, run.notes) || take_as(j, run.graphs) || take_as(j, run.rejects) ||
        take_as(j, run.rechecks) || take_as(j, run.profiles) || take_as(j, run.attached) ||
        take_as(j, run.disturbed);
  });
}

LeftOut left_out(const rec::SampleCommon& s, double usual_clock_mhz) {
  if (usual_clock_mhz > 0 && s.sm_clock_mhz && *s.sm_clock_mhz < 0.75 * usual_clock_mhz)
    return LeftOut::throttled;
  if (s.held && !*s.held) return LeftOut::unheld;
  return LeftOut::counted;
}

// The controls' samples counted by the sample rules: the device and host copies' speeds and
// the launch floor's times by size, and (where asked) why each sample was left out.
void apply_control_rules(const std::vector<rec::LightSample>& lights,
                         const std::vector<rec::FloorSample>& floors, double usual_clock_mhz,
                         std::map<std::int64_t, Light>& light,
                         std::map<std::int64_t, Light>& host_light,
                         std::map<std::int64_t, ComputeLight>* compute_light,
                         std::map<std::int64_t, std::vector<double>>& floor_s,
                         std::vector<LeftOut>* light_left_out,
                         std::vector<LeftOut>* floor_left_out) {
  std::map<std::int64_t, std::vector<double>> device_gbps, host_gbps, device_s, host_s;
  std::map<std::int64_t, std::vector<double>> gemm_tflops;
  std::map<std::int64_t, std::string> gemm_what;
  for (const auto& l : lights) {
    const LeftOut why = left_out(l, usual_clock_mhz);
    if (light_left_out) light_left_out->push_back(why);
    if (l.flops) {  // the compute light
      if (why == LeftOut::counted && l.seconds > 0 && *l.flops > 0) {
        gemm_tflops[l.size].push_back(*l.flops / l.seconds / 1e12);
        gemm_what[l.size] = l.what.value_or("");
      }
      continue;
    }
    if (why != LeftOut::counted || !(l.seconds > 0) || !(l.bytes > 0)) continue;
    const bool host = l.device == "cpu";
    (host ? host_gbps : device_gbps)[l.size].push_back(l.bytes / l.seconds / 1e9);
    (host ? host_s : device_s)[l.size].push_back(l.seconds);
  }
  for (const auto& l : floors) {
    const LeftOut why = left_out(l, usual_clock_mhz);
    if (floor_left_out) floor_left_out->push_back(why);
    if (why == LeftOut::counted) floor_s[l.size].push_back(l.seconds);
  }
  for (auto [from, secs, into] :
       {std::tuple{&device_gbps, &device_s, &light}, {&host_gbps, &host_s, &host_light}})
    for (const auto& [size, v] : *from) {
      const SampleStats st = summarize(v);
      (*into)[size] = {st.n, st.median, st.max, v, summarize(secs->at(size)).median};
    }
  if (compute_light)
    for (const auto& [size, v] : gemm_tflops) {
      const SampleStats st = summarize(v);
      (*compute_light)[size] = {st.n, st.median, st.max, gemm_what[size]};
    }
}

void apply_sample_rules(RunData& run) {
  std::vector<double> clocks;
  for (const auto& r : run.rounds)
    if (r.sm_clock_mhz) clocks.push_back(*r.sm_clock_mhz);
  for (const auto& l : run.light_samples)
    if (l.sm_clock_mhz) clocks.push_back(*l.sm_clock_mhz);
  for (const auto& l : run.floor_samples)
    if (l.sm_clock_mhz) clocks.push_back(*l.sm_clock_mhz);
  run.usual_clock_mhz = clocks.empty() ? 0.0 : summarize(clocks).median;

  for (const auto& r : run.rounds) {
    const LeftOut why = left_out(r, run.usual_clock_mhz);
    run.round_left_out.push_back(why);
    KeptSamples& k = run.samples[{r.arm, r.size, r.mode}];
    if (why != LeftOut::counted) {
      k.left_out[to_string(why)]++;
      continue;
    }
    k.seconds.push_back(r.seconds);
    if (r.host_seconds) k.host_seconds.push_back(*r.host_seconds);
  }

  apply_control_rules(run.light_samples, run.floor_samples, run.usual_clock_mhz, run.light,
                      run.host_light, &run.compute_light, run.floor_samples_s, &run.light_left_out,
                      &run.floor_left_out);
  for (WorkerTiming& w : run.isolated) {
    std::map<std::int64_t, Light> host_light;  // an isolated worker's host copy: not compared
    apply_control_rules(w.light_samples, w.floor_samples, run.usual_clock_mhz, w.light, host_light,
                        nullptr, w.floor_samples_s, nullptr, nullptr);
  }
}

}  // namespace

const ManifestArm* Manifest::arm(const std::string& name) const {
  for (const auto& a : arms)
    if (a.name == name) return &a;
  return nullptr;
}

const char* to_string(LeftOut why) {
  switch (why) {
    case LeftOut::throttled:
      return "throttled";
    case LeftOut::unheld:
      return "unheld";
    default:
      return "";
  }
}

const rec::VerdictRecord* RunData::verdict_of(const std::string& arm) const {
  for (auto it = verdicts.rbegin(); it != verdicts.rend(); ++it)
    if (it->arm == arm) return &*it;
  return nullptr;
}

RunData read_run(const std::filesystem::path& dir) {
  RunData run;
  run.dir = dir;
  run.manifest = read_manifest(dir / "manifest.json", run.problems);
  read_qualification(run);
  read_rounds(run);
  apply_sample_rules(run);
  return run;
}

}  // namespace kq
