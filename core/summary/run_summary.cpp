// summary.json's keys, each listed once (util/json_fields.hpp).
#include "summary/run_summary.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

#include "util/json_fields.hpp"

namespace kq {

using jf::kOmitEmpty;
using nlohmann::json;

// "caught": absent for a good arm, null for a broken one never judged, else true or false.
void put(json& j, const char* key, Caught c) {
  if (c == Caught::not_judged) j[key] = nullptr;
  if (c == Caught::yes || c == Caught::no) j[key] = c == Caught::yes;
}
void get(const json& j, const char* key, Caught& c) {
  auto it = j.find(key);
  if (it == j.end()) return;
  c = it->is_boolean() ? (it->get<bool>() ? Caught::yes : Caught::no) : Caught::not_judged;
}

KQ_JSON_FIELDS(ArtifactFiles) {
  f("files", r.files);
  f("sass", r.sass);
}
KQ_JSON_FIELDS(ArmRow) {
  f("name", r.name);
  f("family", r.family);
  f("device", r.device);
  f("expected_rejection", r.expected_rejection);
  f("verdict", r.verdict);
  f("check", r.check);
  f("case", r.case_name);
  f("detail", r.detail);
  f("counts", r.counts);
  f("sanitizer", r.sanitizer, kOmitEmpty);
  f("artifacts", r.artifacts);
  f("choice", r.choice);
  f("rejected_while_timed", r.rejected_while_timed, kOmitEmpty);
  f("caught", r.caught);
}
KQ_JSON_FIELDS(ReasonGroup) {
  f("reason", r.reason);
  f("arms", r.arms);
}
KQ_JSON_FIELDS(Headline) {
  f("in_contract_cases_passed", r.in_contract_cases_passed);
  f("in_contract_cases", r.in_contract_cases);
  f("in_contract_cases_skipped", r.in_contract_cases_skipped);
  f("out_of_contract_refused", r.out_of_contract_refused);
  f("out_of_contract_cases", r.out_of_contract_cases);
  f("broken_rejected", r.broken_rejected);
  f("broken_total", r.broken_total);
  f("good_qualified", r.good_qualified);
  f("good_total", r.good_total);
}
KQ_JSON_FIELDS(LoadErrorRow) {
  f("file", r.file);
  f("message", r.message);
}
KQ_JSON_FIELDS(FlagNote) {
  f("kind", r.kind);
  f("message", r.message);
}
KQ_JSON_FIELDS(FlagRow) {
  f("arm", r.arm);
  f("size", r.size);
  f("kind", r.kind);
  f("message", r.message);
}
KQ_JSON_FIELDS(TimingCell) {
  f("arm", r.arm);
  f("n", r.n);
  f("median_s", r.median_s);
  f("min_s", r.min_s);
  f("q1_s", r.q1_s);
  f("q3_s", r.q3_s);
  f("rel_noise", r.rel_noise);
  f("gbps", r.gbps);
  f("pct_light", r.pct_light);
  f("tflops", r.tflops);
  f("pct_compute", r.pct_compute);
  f("graph_median_s", r.graph_median_s);
  f("host_median_s", r.host_median_s);
  f("throttled", r.throttled);
  f("unheld", r.unheld);
  f("profile", r.profile);
  f(SpeedupKeys{"eager_speedup", "eager_speedup_lo", "eager_speedup_hi"}, r.eager_speedup);
  f(SpeedupKeys{"speedup", "speedup_lo", "speedup_hi"}, r.speedup);
  f("recheck_ok", r.recheck_ok);
  f("recheck_message", r.recheck_message);
  f("checked", r.checked);
  f("graph_kernel_nodes", r.graph_kernel_nodes);
  f("flags", r.flags, kOmitEmpty);
}
KQ_JSON_FIELDS(TimingRow) {
  f("size", r.size);
  f("point", r.point);
  f("bytes", r.bytes);
  f("flops", r.flops);
  f("rounds", r.rounds);
  f("stopped_by", r.stopped_by);
  f("light_gbps", r.light_gbps);
  f("floor_s", r.floor_s);
  f("host_light_gbps", r.host_light_gbps);
  f("compute_light_tflops", r.compute_light_tflops);
  f("compute_light_what", r.compute_light_what);
  f("ridge", r.ridge);
  f("bound", r.bound);
  f("cupti_attached", r.cupti_attached);
  f("arms", r.arms);
  f("notes", r.notes);
}
KQ_JSON_FIELDS(LightRow) {
  f("size", r.size);
  f("n", r.n);
  f("gbps", r.gbps);
  f("best_gbps", r.best_gbps);
}
KQ_JSON_FIELDS(LightSummary) {
  f("measured", r.measured);
  f("per_size", r.per_size);
}
KQ_JSON_FIELDS(WorkerSlowdown) {
  f("size", r.size);
  f("what", r.what);
  f("ratio", r.ratio);
  f("lo", r.lo);
  f("hi", r.hi);
}
KQ_JSON_FIELDS(WorkerRow) {
  f("label", r.label);
  f("file", r.file);
  f("reason", r.reason);
  f("arms", r.arms);
  f("slowdowns", r.slowdowns);
  f("disturbed", r.disturbed);
  f("why", r.why);
}
KQ_JSON_FIELDS(GpuLoad) {
  f("gpu", r.gpu);
  f("cases", r.cases);
  f("seconds", r.seconds);
}
KQ_JSON_FIELDS(RunSummary) {
  f("schema_version", r.schema_version);
  f("run_dir", r.run_dir);
  f("op", r.op);
  f("dtype", r.dtype);
  f("compute", r.compute);
  f("spec_sha256", r.spec_sha256);
  f("started", r.started);
  f("machine", r.machine);
  f("kq", r.kq);
  f("problems", r.problems, kOmitEmpty);
  f("load_errors", r.load_errors, kOmitEmpty);
  f("plugin_environment", r.plugin_environment, kOmitEmpty);
  f("arms", r.arms);
  f("declined", r.declined);
  f("skipped", r.skipped);
  f("headline", r.headline);
  f("timing_stopped", r.timing_stopped);
  f("sm_clock_mhz_median", r.sm_clock_mhz_median);
  f("timing", r.timing);
  f("light", r.light);
  f("timing_skips", r.timing_skips);
  f("flags", r.flags);
  f("timing_notes", r.timing_notes);
  f("timing_ran", r.timing_ran);
  f("workers", r.workers, kOmitEmpty);
  f("gpu_loads", r.gpu_loads, kOmitEmpty);
  f("decision", r.decision);
  f("baseline_choice", r.decision.baseline_choice);
  f("eager_choice", r.decision.eager_choice);
}

// Facts recorded by others are kept whole; the fields the reports use are read from them once.
namespace {

template <class T>
T read_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

}  // namespace

std::optional<std::string> setting_of(const Settings& run, const std::string& name) {
  const auto it = run.find(name);
  return it == run.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::vector<std::string> differing_settings(const std::vector<const Settings*>& runs) {
  std::set<std::string> names;
  for (const Settings* r : runs)
    for (const auto& [name, _] : *r)
      if (!name.ends_with("_CACHE_DIR")) names.insert(name);
  std::vector<std::string> out;
  for (const std::string& name : names)
    if (std::any_of(runs.begin(), runs.end(), [&](const Settings* r) {
          return setting_of(*r, name) != setting_of(*runs.front(), name);
        }))
      out.push_back(name);
  return out;
}

void to_json(json& j, const MachineFacts& r) { j = r.raw; }
void from_json(const json& j, MachineFacts& r) {
  r.raw = j.is_object() ? j : json::object();
  r.hostname = read_or<std::string>(r.raw, "hostname", "");
  r.cpu = read_or<std::string>(r.raw, "cpu", "");
  r.cuda_unusable = read_or<std::string>(r.raw, "cuda_unusable", "");
  r.cores = read_or<int>(r.raw, "cores", 0);
  r.cuda_driver = read_or<int>(r.raw, "cuda_driver", 0);
  r.cuda_runtime = read_or<int>(r.raw, "cuda_runtime", 0);
  r.gpus.clear();
  for (const json& g : read_or<json>(r.raw, "gpus", json::array()))
    if (g.is_object())
      r.gpus.push_back({read_or<std::string>(g, "name", ""), read_or<int>(g, "sms", 0),
                        read_or<double>(g, "l2_bytes", 0.0)});
  r.devices = read_or<std::vector<std::string>>(r.raw, "devices", {});
  r.timing_gpu = read_or<std::string>(r.raw, "timing_gpu", "");
  r.environment.clear();
  if (const json env = read_or<json>(r.raw, "environment", json::object()); env.is_object())
    for (const auto& [name, value] : env.items())
      if (value.is_string()) r.environment[name] = value.get<std::string>();
}

void to_json(json& j, const KqBuild& r) { j = r.raw; }
void from_json(const json& j, KqBuild& r) {
  r.raw = j.is_object() ? j : json::object();
  r.version = read_or<std::string>(r.raw, "version", "");
  r.commit = read_or<std::string>(r.raw, "commit", "");
  r.dirty = read_or<bool>(r.raw, "dirty", false);
}

void to_json(json& j, const KernelProfile& r) { j = r.raw; }
void from_json(const json& j, KernelProfile& r) {
  r.raw = j.is_object() ? j : json::object();
  r.unavailable = r.raw.contains("unavailable")
                      ? std::optional(read_or<std::string>(r.raw, "unavailable", ""))
                      : std::nullopt;
  r.kernels = read_or<int>(r.raw, "kernels", 0);
  r.memcpys = read_or<int>(r.raw, "memcpys", 0);
  r.memsets = read_or<int>(r.raw, "memsets", 0);
  r.kernel_seconds = read_or<double>(r.raw, "kernel_seconds", 0.0);
  r.first.reset();
  const json list = read_or<json>(r.raw, "list", json::array());
  if (!list.is_array() || list.empty() || !list[0].is_object()) return;
  const json& k = list[0];
  const json grid = read_or<json>(k, "grid", json::array({0}));
  const json block = read_or<json>(k, "block", json::array({0}));
  auto x = [](const json& dims) {
    return dims.is_array() && !dims.empty() && dims[0].is_number() ? dims[0].get<int>() : 0;
  };
  r.first = FirstKernel{read_or<std::string>(k, "name", ""), x(grid), x(block),
                        read_or<int>(k, "registers", 0), read_or<double>(k, "occupancy", 0.0)};
}

#define KQ_SUMMARY_JSON(T)                                      \
  void to_json(json& j, const T& r) { jf::write_fields(j, r); } \
  void from_json(const json& j, T& r) { jf::read_fields(j, r); }
KQ_SUMMARY_JSON(ArtifactFiles)
KQ_SUMMARY_JSON(ArmRow)
KQ_SUMMARY_JSON(ReasonGroup)
KQ_SUMMARY_JSON(Headline)
KQ_SUMMARY_JSON(LoadErrorRow)
KQ_SUMMARY_JSON(FlagNote)
KQ_SUMMARY_JSON(FlagRow)
KQ_SUMMARY_JSON(TimingCell)
KQ_SUMMARY_JSON(TimingRow)
KQ_SUMMARY_JSON(LightRow)
KQ_SUMMARY_JSON(LightSummary)
KQ_SUMMARY_JSON(WorkerSlowdown)
KQ_SUMMARY_JSON(WorkerRow)
KQ_SUMMARY_JSON(GpuLoad)
KQ_SUMMARY_JSON(RunSummary)
#undef KQ_SUMMARY_JSON

const ArmRow* RunSummary::arm(const std::string& name) const {
  for (const ArmRow& a : arms)
    if (a.name == name) return &a;
  return nullptr;
}

std::string RunSummary::where(std::int64_t size) const {
  for (const TimingRow& row : timing)
    if (row.size == size && row.point) return *row.point;
  return std::to_string(size) + " elements";
}

RunSummary read_summary(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(file.string() + ": not a JSON object");
  try {
    return j.get<RunSummary>();
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

}  // namespace kq
