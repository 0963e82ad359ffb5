// The decision's JSON form, each type's keys listed once (util/json_fields.hpp).

#include "decision/decision.hpp"
#include "util/json_fields.hpp"

namespace kq {

using nlohmann::json;

void put(json& j, SpeedupKeys k, const std::optional<Speedup>& v) {
  if (!v) return;
  j[k.ratio] = v->ratio;
  j[k.lo] = v->lo;
  j[k.hi] = v->hi;
}
void get(const json& j, SpeedupKeys k, std::optional<Speedup>& v) {
  if (!j.contains(k.ratio)) return;
  Speedup s;
  jf::get(j, k.ratio, s.ratio);
  jf::get(j, k.lo, s.lo);
  jf::get(j, k.hi, s.hi);
  v = s;
}
void put(json& j, SpanKeys k, const SpeedupSpan& v) {
  j[k.min] = v.min;
  j[k.max] = v.max;
}
void get(const json& j, SpanKeys k, SpeedupSpan& v) {
  jf::get(j, k.min, v.min);
  jf::get(j, k.max, v.max);
}
void put(json& j, SpanKeys k, const std::optional<SpeedupSpan>& v) {
  if (v) put(j, k, *v);
}
void get(const json& j, SpanKeys k, std::optional<SpeedupSpan>& v) {
  if (!j.contains(k.min)) return;
  v.emplace();
  get(j, k, *v);
}

KQ_JSON_FIELDS(SizeDecision) {
  f("size", r.size);
  f("winner", r.winner);
  f(SpeedupKeys{"speedup", "lo", "hi"}, r.speedup);
  f(SpeedupKeys{"eager_speedup", "eager_lo", "eager_hi"}, r.eager_speedup);
}
KQ_JSON_FIELDS(HostBound) {
  f("size", r.size);
  f("host_s", r.host_s);
  f("gpu_s", r.gpu_s);
}
KQ_JSON_FIELDS(WinRange) {
  f("arm", r.arm);
  f("from", r.from);
  f("to", r.to);
  f(SpanKeys{"min_speedup", "max_speedup"}, r.speedup);
  f(SpanKeys{"min_eager_speedup", "max_eager_speedup"}, r.eager_speedup);
  f("host_bound", r.host_bound);
}
KQ_JSON_FIELDS(BestCandidate) {
  f("arm", r.arm);
  f(SpanKeys{"min_speedup", "max_speedup"}, r.speedup);
  f(SpanKeys{"min_eager_speedup", "max_eager_speedup"}, r.eager_speedup);
}
KQ_JSON_FIELDS(ArmDevice) {
  f("arm", r.arm);
  f("device", r.device);
}
KQ_JSON_FIELDS(ArmWhy) {
  f("arm", r.arm);
  f("why", r.why);
}
KQ_JSON_FIELDS(ArmChoice) {
  f("list", r.list);
  f("used", r.used);
  f("passed_over", r.passed_over);
}
KQ_JSON_FIELDS(Decision) {
  f("baseline", r.baseline);
  f("min_speedup", r.min_speedup);
  f("baseline_ran", r.baseline_ran);
  f("per_size", r.per_size);
  f("ranges", r.ranges);
  f("other_device", r.other_device);
  f("not_adopted", r.not_adopted);
  f("eager", r.eager);
  f("eager_ran", r.eager_ran);
  f("best_candidate", r.best_candidate);
  f("sentence", r.sentence);
}

#define KQ_DECISION_JSON(T)                                     \
  void to_json(json& j, const T& r) { jf::write_fields(j, r); } \
  void from_json(const json& j, T& r) { jf::read_fields(j, r); }
KQ_DECISION_TYPES(KQ_DECISION_JSON)
KQ_DECISION_JSON(Decision)
#undef KQ_DECISION_JSON

}  // namespace kq
