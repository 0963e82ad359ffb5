// The engine configurations cuDNN's heuristics propose for a finalized operation graph, each
// described for the search notes (engine index, knob choices, numerical and behaviour notes),
// and an execution plan's JSON. Shared by the pointwise search and the norm arm.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"

namespace kq::cudnn_graph {

struct EngineConfig {
  Desc desc;           // CUDNN_BACKEND_ENGINECFG_DESCRIPTOR
  std::string source;  // heuristics mode(s) that proposed it: "A", "FALLBACK", "A+FALLBACK"
  std::int64_t engine = -1;
  std::string knobs;
  std::string notes;
};

// Appends the configurations heuristics `mode` proposes for `graph`, merging those already
// listed (same engine and knobs: the source becomes "A+FALLBACK").
Status heuristics(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
                  const char* mode_name, std::vector<EngineConfig>& out);

// CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, or a JSON object saying why it is missing.
std::string plan_json(const Desc& plan);

}  // namespace kq::cudnn_graph
