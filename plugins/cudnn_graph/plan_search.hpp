// The search prepare() runs, outside any timed region: for each way of seeing the N contiguous
// elements as a cuDNN tensor (a Shaping), build the operation graph, ask the heuristics (modes A
// and FALLBACK) for engine configurations, finalize each into an execution plan, execute it on
// the problem's own buffers, check a few output elements on the host, and time it with CUDA
// events (median of a few runs after warm-up). The fastest plan that ran and checked out wins.
// Every (shaping, configuration) tried is recorded with its time or why it failed, since the
// measured differences between shapings on the H200 are large (ANCHORS.md: up to 13.7x) and some
// plans finalize and then fail at execution.
#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "graph_builder.hpp"
#include "kq/op_spec.hpp"
#include "plan_memo.hpp"

namespace kq::cudnn_graph {

struct SearchLimits {
  double soft_seconds = 20.0;  // once a checked plan exists, no new plan is tried after this
  double hard_seconds = 60.0;  // no new plan is tried after this, plan or not
  int max_plans = 48;          // execution plans finalized, over all shapings
  int warmup = 3;              // executions before timing (the first one is also checked)
  int reps = 5;                // timed executions; the median is kept
  // The plan an earlier search chose (plan_memo.hpp): tried first, and the search stops there
  // when it runs and checks out.
  std::optional<PlanChoice> first;
};

// The problem's device buffers: one pointer per spec input, the output, the element count.
struct Buffers {
  std::vector<void*> inputs;
  void* output = nullptr;
  std::int64_t n = 0;
  DType dtype = DType::f32;  // of every buffer: f32, f16 or bf16
};

// One (shaping, engine configuration) tried, or one shaping whose graph did not build.
struct Trial {
  std::string shaping;
  std::string source;  // heuristics mode(s) that proposed it: "A", "FALLBACK", "A+FALLBACK"
  std::int64_t engine = -1;
  std::string knobs;
  std::string notes;  // numerical and behaviour notes
  std::int64_t workspace = 0;
  std::string outcome;  // "ok", or the stage and cuDNN's / CUDA's message
  double median_us = -1.0;
  double min_us = -1.0;
};

// A device allocation freed with the object.
struct DeviceBuffer {
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* ptr = nullptr;
};

// The plan kept, with everything it refers to.
struct ChosenPlan {
  std::shared_ptr<BuiltGraph> graph;
  Desc engine_config;
  Desc plan;
  std::shared_ptr<DeviceBuffer> workspace;
  std::int64_t workspace_size = 0;
  Trial trial;       // its row of the table
  std::string json;  // CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, or why it is missing
};

struct SearchResult {
  std::unique_ptr<ChosenPlan> best;
  std::vector<Trial> trials;
  std::string stopped;  // why the search stopped early, if it did
  double seconds = 0.0;
};

// The shapings tried for n elements, most promising first.
std::vector<Shaping> shapings_for(std::int64_t n);

// Runs the search. Returns error only when the CUDA context is no longer usable (a sticky error
// from a failed execution); "no plan found" is an ok status with out.best empty.
Status search(cudnnHandle_t handle, cudaStream_t stream, const OpSpec& spec, const Buffers& buf,
              const GraphOptions& options, const SearchLimits& limits, SearchResult& out);

// A finalized variant pack binding the graph's tensors to these pointers.
Status make_variant_pack(const BuiltGraph& g, const std::vector<void*>& inputs, void* output,
                         void* workspace, Desc& out);

// The table of trials as markdown.
std::string format_trials(const std::vector<Trial>& trials);
inline std::string format_trials(const SearchResult& r) { return format_trials(r.trials); }

}  // namespace kq::cudnn_graph
