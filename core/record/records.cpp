#include "record/records.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace kq::rec {
namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 7> kVerdictWords = {{
    {Verdict::qualified, "qualified"},
    {Verdict::rejected, "rejected"},
    {Verdict::crashed, "crashed"},
    {Verdict::hung, "hung"},
    {Verdict::unsupported, "unsupported"},
    {Verdict::skipped, "skipped"},
    {Verdict::not_run, "not run"},
}};

// Optional fields: written when present, read when present and not null.
template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
void get(const json& j, const char* key, T& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) it->get_to(v);
}
template <class T>
void get(const json& j, const char* key, std::optional<T>& v) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) v = it->get<T>();
}

json typed(std::string_view type) { return {{"type", std::string(type)}}; }

void put_sample(json& j, const SampleCommon& s) {
  j["size"] = s.size;
  j["round"] = s.round;
  j["seconds"] = s.seconds;
  put(j, "held", s.held);
  put(j, "sm_clock_mhz", s.sm_clock_mhz);
}
void get_sample(const json& j, SampleCommon& s) {
  get(j, "size", s.size);
  get(j, "round", s.round);
  get(j, "seconds", s.seconds);
  get(j, "held", s.held);
  get(j, "sm_clock_mhz", s.sm_clock_mhz);
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

std::string_view type_of(const json& j) {
  if (!j.is_object()) return {};
  auto it = j.find("type");
  return it != j.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                          : std::string_view();
}

void to_json(json& j, const CaseStart& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["case"] = r.case_name;
  j["budget_s"] = r.budget_s;
  put(j, "pass", r.pass);
}
void from_json(const json& j, CaseStart& r) {
  get(j, "arm", r.arm);
  get(j, "case", r.case_name);
  get(j, "budget_s", r.budget_s);
  get(j, "pass", r.pass);
}

void to_json(json& j, const Waiting& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["case"] = r.case_name;
  put(j, "pass", r.pass);
}
void from_json(const json& j, Waiting& r) {
  get(j, "arm", r.arm);
  get(j, "case", r.case_name);
  get(j, "pass", r.pass);
}

void to_json(json& j, const CaseResult& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["case"] = r.case_name;
  j["group"] = r.group;
  j["in_contract"] = r.in_contract;
  j["result"] = r.result;
  j["seconds"] = r.seconds;
  put(j, "outside_because", r.outside_because);
  put(j, "check", r.check);
  put(j, "message", r.message);
  put(j, "index", r.index);
  put(j, "bad_count", r.bad_count);
  put(j, "expected", r.expected);
  put(j, "got", r.got);
  put(j, "pass", r.pass);
}
void from_json(const json& j, CaseResult& r) {
  get(j, "arm", r.arm);
  get(j, "case", r.case_name);
  get(j, "group", r.group);
  get(j, "in_contract", r.in_contract);
  get(j, "result", r.result);
  get(j, "seconds", r.seconds);
  get(j, "outside_because", r.outside_because);
  get(j, "check", r.check);
  get(j, "message", r.message);
  get(j, "index", r.index);
  get(j, "bad_count", r.bad_count);
  get(j, "expected", r.expected);
  get(j, "got", r.got);
  get(j, "pass", r.pass);
}

void to_json(json& j, const CaseCounts& c) {
  j = {{"passed", c.passed},
       {"refused", c.refused},
       {"failed", c.failed},
       {"skipped", c.skipped},
       {"total", c.total}};
}
void from_json(const json& j, CaseCounts& c) {
  get(j, "passed", c.passed);
  get(j, "refused", c.refused);
  get(j, "failed", c.failed);
  get(j, "skipped", c.skipped);
  get(j, "total", c.total);
}

void to_json(json& j, const VerdictRecord& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["verdict"] = std::string(to_string(r.verdict));
  put(j, "check", r.check);
  put(j, "case", r.case_name);
  put(j, "detail", r.detail);
  put(j, "counts", r.counts);
  put(j, "pass", r.pass);
}
void from_json(const json& j, VerdictRecord& r) {
  get(j, "arm", r.arm);
  r.verdict = parse_verdict(j.value("verdict", std::string("not run")));
  get(j, "check", r.check);
  get(j, "case", r.case_name);
  get(j, "detail", r.detail);
  get(j, "counts", r.counts);
  get(j, "pass", r.pass);
}

void to_json(json& j, const SanitizerFinding& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["tool"] = r.tool;
  j["log"] = r.log;
  j["errors"] = r.errors;
  j["first"] = r.first;
  j["verdict_under_tool"] = r.verdict_under_tool;
}
void from_json(const json& j, SanitizerFinding& r) {
  get(j, "arm", r.arm);
  get(j, "tool", r.tool);
  get(j, "log", r.log);
  get(j, "errors", r.errors);
  get(j, "first", r.first);
  get(j, "verdict_under_tool", r.verdict_under_tool);
}

void to_json(json& j, const SizeStart& r) {
  j = typed(r.kType);
  j["size"] = r.size;
  j["arms"] = r.arms;
  j["l2"] = r.l2;
  j["check_seed"] = r.check_seed;
}
void from_json(const json& j, SizeStart& r) {
  get(j, "size", r.size);
  get(j, "arms", r.arms);
  get(j, "l2", r.l2);
  get(j, "check_seed", r.check_seed);
}

void to_json(json& j, const ArmSkip& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
  j["reason"] = r.reason;
  put(j, "mode", r.mode);
}
void from_json(const json& j, ArmSkip& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  get(j, "reason", r.reason);
  get(j, "mode", r.mode);
}

void to_json(json& j, const ArmNote& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
  j["note"] = r.note;
}
void from_json(const json& j, ArmNote& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  get(j, "note", r.note);
}

void to_json(json& j, const GraphInfo& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
  j["launches"] = r.launches;
  j["kernel_nodes"] = r.kernel_nodes;
  j["work_nodes"] = r.work_nodes;
}
void from_json(const json& j, GraphInfo& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  get(j, "launches", r.launches);
  get(j, "kernel_nodes", r.kernel_nodes);
  get(j, "work_nodes", r.work_nodes);
}

void to_json(json& j, const LightSample& r) {
  j = typed(r.kType);
  put_sample(j, r);
  j["bytes"] = r.bytes;
}
void from_json(const json& j, LightSample& r) {
  get_sample(j, r);
  get(j, "bytes", r.bytes);
}

void to_json(json& j, const RoundSample& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["mode"] = r.mode;
  put_sample(j, r);
  put(j, "host_seconds", r.host_seconds);
  put(j, "launches", r.launches);
  if (r.checked) j["checked"] = true;
}
void from_json(const json& j, RoundSample& r) {
  get(j, "arm", r.arm);
  get(j, "mode", r.mode);
  get_sample(j, r);
  get(j, "host_seconds", r.host_seconds);
  get(j, "launches", r.launches);
  get(j, "checked", r.checked);
}

void to_json(json& j, const TimingReject& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
  j["mode"] = r.mode;
  j["round"] = r.round;
  j["check"] = r.check;
  j["message"] = r.message;
  put(j, "index", r.index);
  put(j, "expected", r.expected);
  put(j, "got", r.got);
}
void from_json(const json& j, TimingReject& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  get(j, "mode", r.mode);
  get(j, "round", r.round);
  get(j, "check", r.check);
  get(j, "message", r.message);
  get(j, "index", r.index);
  get(j, "expected", r.expected);
  get(j, "got", r.got);
}

void to_json(json& j, const SizeEnd& r) {
  j = typed(r.kType);
  j["size"] = r.size;
  j["rounds"] = r.rounds;
  j["stopped_by"] = r.stopped_by;
  j["elapsed_s"] = r.elapsed_s;
}
void from_json(const json& j, SizeEnd& r) {
  get(j, "size", r.size);
  get(j, "rounds", r.rounds);
  get(j, "stopped_by", r.stopped_by);
  get(j, "elapsed_s", r.elapsed_s);
}

void to_json(json& j, const Recheck& r) {
  j = typed(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
  j["ok"] = r.ok;
  put(j, "checked", r.checked);
  put(j, "message", r.message);
}
void from_json(const json& j, Recheck& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  get(j, "ok", r.ok);
  get(j, "checked", r.checked);
  get(j, "message", r.message);
}

void to_json(json& j, const Profile& r) {
  j = r.body.is_object() ? r.body : json::object();
  j["type"] = std::string(r.kType);
  j["arm"] = r.arm;
  j["size"] = r.size;
}
void from_json(const json& j, Profile& r) {
  get(j, "arm", r.arm);
  get(j, "size", r.size);
  r.body = j;
  for (const char* k : {"type", "arm", "size"}) r.body.erase(k);
}

void to_json(json& j, const ProfilerAttached& r) {
  j = typed(r.kType);
  j["size"] = r.size;
  j["reason"] = r.reason;
}
void from_json(const json& j, ProfilerAttached& r) {
  get(j, "size", r.size);
  get(j, "reason", r.reason);
}

void to_json(json& j, const TimingStopped& r) {
  j = typed(r.kType);
  j["reason"] = r.reason;
}
void from_json(const json& j, TimingStopped& r) { get(j, "reason", r.reason); }

void to_json(json& j, const Done& r) { j = typed(r.kType); }
void from_json(const json&, Done&) {}

}  // namespace kq::rec
