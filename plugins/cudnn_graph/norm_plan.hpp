// The search cudnn_norm's prepare() runs, outside any timed region, as the pointwise search does
// (plan_search.hpp): build the norm graph for the problem's rows and cols, ask the heuristics
// (modes A and FALLBACK) for engine configurations, finalize each into an execution plan,
// execute it on the problem's own buffers (outputs poisoned first), check the first and last
// rows against a float64 evaluation on the host, and time it with CUDA events. The fastest plan
// that ran and checked out wins; every configuration tried is recorded with its time or the
// stage that failed and cuDNN's message.
#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "norm_graph.hpp"
#include "plan_search.hpp"

namespace kq::cudnn_graph {

struct NormPlan {
  std::unique_ptr<NormGraph> graph;
  Desc engine_config;
  Desc plan;
  std::shared_ptr<DeviceBuffer> workspace;
  std::int64_t workspace_size = 0;
  Trial trial;
  std::string json;
};

struct NormSearch {
  std::unique_ptr<NormPlan> best;
  std::vector<Trial> trials;
  std::vector<std::string> graph_lines;  // the graph's tensors and operation, for the notes
  std::string stopped;
  double seconds = 0.0;
};

// Runs the search. Returns an error for a graph that does not build (a descriptor mistake) or a
// lost CUDA context, unsupported where cuDNN declines the graph (NOT_SUPPORTED) or offers no
// engine configuration; "no plan ran and checked out" is ok with out.best empty.
Status search_norm(cudnnHandle_t handle, cudaStream_t stream, const NormMatch& m, const NormDims& d,
                   const NormPointers& p, std::int64_t alignment, const SearchLimits& limits,
                   NormSearch& out);

// The plan's variant pack for other pointers (run()).
Status norm_pack_for(const NormPlan& plan, const NormPointers& p, Desc& out);

}  // namespace kq::cudnn_graph
