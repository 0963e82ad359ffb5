#include "record/records.hpp"

#include <array>
#include <stdexcept>
#include <utility>

#include "util/json_fields.hpp"

namespace kq::rec {
namespace {

json typed(std::string_view type) { return {{"type", std::string(type)}}; }

constexpr std::array<std::pair<Verdict, std::string_view>, 7> kVerdictWords = {{
    {Verdict::qualified, "qualified"},
    {Verdict::rejected, "rejected"},
    {Verdict::crashed, "crashed"},
    {Verdict::hung, "hung"},
    {Verdict::unsupported, "unsupported"},
    {Verdict::skipped, "skipped"},
    {Verdict::not_run, "not run"},
}};

// A field is written under its key; an optional one only when present, and read when present
// and not null (util/json_fields.hpp). A verdict is its word; reading an unknown one throws.
using jf::get;
using jf::put;
void put(json& j, const char* key, Verdict v) { j[key] = std::string(to_string(v)); }
void get(const json& j, const char* key, Verdict& v) {
  v = parse_verdict(j.value(key, std::string("not run")));
}

// Each record's fields, once: f(key, member) for every member, for writing and for reading.
KQ_JSON_FIELDS(CaseStart) {
  f("arm", r.arm);
  f("case", r.case_name);
  f("budget_s", r.budget_s);
  f("pass", r.pass);
  f("prepare_budget_s", r.prepare_budget_s);
}

KQ_JSON_FIELDS(Prepared) {
  f("arm", r.arm);
  f("case", r.case_name);
  f("seconds", r.seconds);
}
KQ_JSON_FIELDS(Waiting) {
  f("arm", r.arm);
  f("case", r.case_name);
  f("pass", r.pass);
  f("turn", r.turn);
}
KQ_JSON_FIELDS(CaseResult) {
  f("arm", r.arm);
  f("case", r.case_name);
  f("group", r.group);
  f("in_contract", r.in_contract);
  f("result", r.result);
  f("seconds", r.seconds);
  f("outside_because", r.outside_because);
  f("check", r.check);
  f("message", r.message);
  f("index", r.index);
  f("bad_count", r.bad_count);
  f("expected", r.expected);
  f("got", r.got);
  f("pass", r.pass);
  f("stages", r.stages);
  f("checked_on", r.checked_on);
  f("sampled_elements", r.sampled_elements);
  f("gpu", r.gpu);
}
KQ_JSON_FIELDS(CaseStages) {
  f("generate", r.generate);
  f("reference", r.reference);
  f("upload", r.upload);
  f("run", r.run);
  f("download", r.download);
  f("compare", r.compare);
}
KQ_JSON_FIELDS(CaseCounts) {
  f("passed", r.passed);
  f("refused", r.refused);
  f("failed", r.failed);
  f("skipped", r.skipped);
  f("total", r.total);
}
KQ_JSON_FIELDS(VerdictRecord) {
  f("arm", r.arm);
  f("verdict", r.verdict);
  f("check", r.check);
  f("case", r.case_name);
  f("detail", r.detail);
  f("counts", r.counts);
  f("pass", r.pass);
  f("stages", r.stages);
}
KQ_JSON_FIELDS(SanitizerFinding) {
  f("arm", r.arm);
  f("tool", r.tool);
  f("log", r.log);
  f("errors", r.errors);
  f("first", r.first);
  f("verdict_under_tool", r.verdict_under_tool);
}
KQ_JSON_FIELDS(SizeStart) {
  f("size", r.size);
  f("arms", r.arms);
  f("l2", r.l2);
  f("check_seed", r.check_seed);
  f("point", r.point);
  f("bytes", r.bytes);
  f("flops", r.flops);
  f("arm_setup_s", r.arm_setup_s);
}
KQ_JSON_FIELDS(ArmSkip) {
  f("arm", r.arm);
  f("size", r.size);
  f("reason", r.reason);
  f("mode", r.mode);
}
KQ_JSON_FIELDS(ArmNote) {
  f("arm", r.arm);
  f("size", r.size);
  f("note", r.note);
}
KQ_JSON_FIELDS(GraphInfo) {
  f("arm", r.arm);
  f("size", r.size);
  f("launches", r.launches);
  f("kernel_nodes", r.kernel_nodes);
  f("work_nodes", r.work_nodes);
}
template <class R, class F>
void sample_fields(R& r, F&& f) {
  f("size", r.size);
  f("round", r.round);
  f("seconds", r.seconds);
  f("held", r.held);
  f("sm_clock_mhz", r.sm_clock_mhz);
}
KQ_JSON_FIELDS(LightSample) {
  sample_fields(r, f);
  f("bytes", r.bytes);
  f("device", r.device);
  f("flops", r.flops);
  f("what", r.what);
}
KQ_JSON_FIELDS(FloorSample) { sample_fields(r, f); }
KQ_JSON_FIELDS(RoundSample) {
  f("arm", r.arm);
  f("mode", r.mode);
  sample_fields(r, f);
  f("host_seconds", r.host_seconds);
  f("launches", r.launches);
  f("checked", r.checked);
}
KQ_JSON_FIELDS(TimingReject) {
  f("arm", r.arm);
  f("size", r.size);
  f("mode", r.mode);
  f("round", r.round);
  f("check", r.check);
  f("message", r.message);
  f("index", r.index);
  f("expected", r.expected);
  f("got", r.got);
}
KQ_JSON_FIELDS(SizeEnd) {
  f("size", r.size);
  f("rounds", r.rounds);
  f("stopped_by", r.stopped_by);
  f("elapsed_s", r.elapsed_s);
  f("setup_s", r.setup_s);
  f("check_s", r.check_s);
  f("patch_s", r.patch_s);
  f("sample_s", r.sample_s);
  f("light_s", r.light_s);
  f("checks", r.checks);
  f("host_checks", r.host_checks);
  f("host_checks_why", r.host_checks_why);
}
KQ_JSON_FIELDS(Recheck) {
  f("arm", r.arm);
  f("size", r.size);
  f("ok", r.ok);
  f("checked", r.checked);
  f("message", r.message);
}
KQ_JSON_FIELDS(ProfilerAttached) {
  f("size", r.size);
  f("reason", r.reason);
}
KQ_JSON_FIELDS(Disturbed) {
  f("size", r.size);
  f("arm", r.arm);
  f("what", r.what);
}
KQ_JSON_FIELDS(WorkerStart) {
  f("label", r.label);
  f("file", r.file);
  f("reason", r.reason);
  f("arms", r.arms);
  f("references", r.references);
}
KQ_JSON_FIELDS(TimingStopped) { f("reason", r.reason); }
KQ_JSON_FIELDS(Done) {}
KQ_JSON_FIELDS(Warmed) {
  f("seconds", r.seconds);
  f("calls", r.calls);
}
KQ_JSON_FIELDS(Alive) {}

template <class R>
void write(json& j, const R& r) {
  if constexpr (requires { R::kType; })
    j = typed(R::kType);
  else
    j = json::object();
  fields(r, [&](const char* key, const auto& v) { put(j, key, v); });
}
template <class R>
void read(const json& j, R& r) {
  fields(r, [&](const char* key, auto& v) { get(j, key, v); });
}

// A profile's body is CUPTI's record (device/kernel_profile.hpp), kept as it is.
void write(json& j, const Profile& r) {
  j = r.body.is_object() ? r.body : json::object();
  j["type"] = std::string(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
}
void read(const json& j, Profile& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  r.body = j;
  for (const char* k : {"type", "arm", "size"}) r.body.erase(k);
}

}  // namespace

std::string_view to_string(Verdict v) {
  for (const auto& [k, word] : kVerdictWords)
    if (k == v) return word;
  return "not run";
}

Verdict parse_verdict(std::string_view s) {
  for (const auto& [k, word] : kVerdictWords)
    if (word == s) return k;
  throw std::invalid_argument("unknown verdict \"" + std::string(s) + "\"");
}

bool failed(Verdict v) {
  return v == Verdict::rejected || v == Verdict::crashed || v == Verdict::hung;
}
bool not_judged(Verdict v) {
  return v == Verdict::skipped || v == Verdict::unsupported || v == Verdict::not_run;
}

void to_json(json& j, const Verdict& v) { j = std::string(to_string(v)); }
void from_json(const json& j, Verdict& v) {
  v = Verdict::not_run;
  if (!j.is_string()) return;
  for (const auto& [k, word] : kVerdictWords)
    if (word == j.get_ref<const std::string&>()) v = k;
}

std::string_view type_of(const json& j) {
  if (!j.is_object()) return {};
  auto it = j.find("type");
  return it != j.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                          : std::string_view();
}

#define KQ_RECORD_JSON(R)                            \
  void to_json(json& j, const R& r) { write(j, r); } \
  void from_json(const json& j, R& r) { read(j, r); }
KQ_RECORD_TYPES(KQ_RECORD_JSON)
#undef KQ_RECORD_JSON

}  // namespace kq::rec
