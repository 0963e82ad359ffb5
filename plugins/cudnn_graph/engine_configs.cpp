#include "engine_configs.hpp"

#include <algorithm>
#include <array>

namespace kq::cudnn_graph {

namespace {

// Engine index, knob choices and notes of an engine configuration, for the table.
void describe_config(EngineConfig& c) {
  Desc eng;
  std::int64_t got = 0;
  if (!Desc::create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, eng).is_ok()) return;
  if (!c.desc
           .get(KQ_ATTR(CUDNN_ATTR_ENGINECFG_ENGINE), CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                eng.addr())
           .is_ok()) {
    c.notes = "engine unreadable";
    return;
  }
  eng.get(KQ_ATTR(CUDNN_ATTR_ENGINE_GLOBAL_INDEX), CUDNN_TYPE_INT64, 1, &got, &c.engine);

  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> num{};
  std::int64_t n_num = 0;
  std::string notes;
  if (eng.get(KQ_ATTR(CUDNN_ATTR_ENGINE_NUMERICAL_NOTE), CUDNN_TYPE_NUMERICAL_NOTE,
              static_cast<std::int64_t>(num.size()), &n_num, num.data())
          .is_ok())
    for (std::int64_t i = 0; i < n_num && i < static_cast<std::int64_t>(num.size()); ++i)
      notes += std::string(notes.empty() ? "" : " ") + numerical_note_name(num[i]);
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> beh{};
  std::int64_t n_beh = 0;
  if (eng.get(KQ_ATTR(CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE), CUDNN_TYPE_BEHAVIOR_NOTE,
              static_cast<std::int64_t>(beh.size()), &n_beh, beh.data())
          .is_ok())
    for (std::int64_t i = 0; i < n_beh && i < static_cast<std::int64_t>(beh.size()); ++i)
      notes += std::string(notes.empty() ? "" : " ") + behavior_note_name(beh[i]);
  c.notes = notes.empty() ? "-" : notes;

  // Knob choices: the array must hold pre-created KNOB_CHOICE descriptors for cuDNN to fill.
  std::vector<Desc> choices(CUDNN_KNOB_TYPE_COUNTS);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (Desc& d : choices) {
    if (!Desc::create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, d).is_ok()) return;
    raw.push_back(d.get());
  }
  std::int64_t n_knobs = 0;
  if (!c.desc
           .get(KQ_ATTR(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES), CUDNN_TYPE_BACKEND_DESCRIPTOR,
                static_cast<std::int64_t>(raw.size()), &n_knobs, raw.data())
           .is_ok())
    return;
  std::string knobs;
  for (std::int64_t i = 0; i < n_knobs && i < static_cast<std::int64_t>(raw.size()); ++i) {
    cudnnBackendKnobType_t type{};
    std::int64_t value = 0, cnt = 0;
    const Desc& k = choices[static_cast<std::size_t>(i)];
    if (!k.get(KQ_ATTR(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE), CUDNN_TYPE_KNOB_TYPE, 1, &cnt, &type)
             .is_ok() ||
        !k.get(KQ_ATTR(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE), CUDNN_TYPE_INT64, 1, &cnt, &value)
             .is_ok())
      continue;
    const char* name = knob_type_name(type);
    knobs += std::string(knobs.empty() ? "" : " ") +
             (name ? name : "knob" + std::to_string(static_cast<int>(type))) + "=" +
             std::to_string(value);
  }
  c.knobs = knobs.empty() ? "-" : knobs;
}

}  // namespace

// Appends the configurations heuristics `mode` proposes, merging those already listed.
Status heuristics(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
                  const char* mode_name, std::vector<EngineConfig>& out) {
  Desc heur;
  Status s = Desc::create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, heur);
  if (s.is_ok()) s = heur.set_desc(KQ_ATTR(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH), graph);
  if (s.is_ok()) s = heur.set(KQ_ATTR(CUDNN_ATTR_ENGINEHEUR_MODE), CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (s.is_ok()) s = heur.finalize();
  std::int64_t count = 0;
  if (s.is_ok())
    s = heur.get(KQ_ATTR(CUDNN_ATTR_ENGINEHEUR_RESULTS), CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                 nullptr);
  if (!s.is_ok()) return s;
  std::vector<EngineConfig> cfgs(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (EngineConfig& c : cfgs) {
    s = Desc::create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, c.desc);
    if (!s.is_ok()) return s;
    raw.push_back(c.desc.get());
  }
  std::int64_t got = 0;
  if (count > 0) {
    s = heur.get(KQ_ATTR(CUDNN_ATTR_ENGINEHEUR_RESULTS), CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                 raw.data());
    if (!s.is_ok()) return s;
  }
  cfgs.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(got, 0, count)));
  for (EngineConfig& c : cfgs) {
    c.source = mode_name;
    describe_config(c);
    auto same = std::find_if(out.begin(), out.end(), [&](const EngineConfig& o) {
      return o.engine == c.engine && o.knobs == c.knobs && c.engine >= 0;
    });
    if (same != out.end()) {
      same->source += std::string("+") + mode_name;
      continue;
    }
    out.push_back(std::move(c));
  }
  return Status::ok();
}

std::string plan_json(const Desc& plan) {
  std::int64_t size = 0;
  Status s = plan.get(KQ_ATTR(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION), CUDNN_TYPE_CHAR, 0,
                      &size, nullptr);
  if (!s.is_ok()) return "{\"unavailable\": \"size query failed\"}";
  std::vector<char> text(static_cast<std::size_t>(std::max<std::int64_t>(size, 0)) + 1, '\0');
  std::int64_t got = 0;
  s = plan.get(KQ_ATTR(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION), CUDNN_TYPE_CHAR, size, &got,
               text.data());
  if (!s.is_ok()) return "{\"unavailable\": \"query failed\"}";
  text.back() = '\0';
  return std::string(text.data());
}

}  // namespace kq::cudnn_graph
