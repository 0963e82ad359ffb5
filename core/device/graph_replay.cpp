#include "device/graph_replay.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "device/cuda_check.hpp"

namespace kq {

#if KQ_HAVE_CUDA
namespace {

// Adds the kernel and work nodes of `g` (and of its child graphs) to the counts.
void count_nodes(cudaGraph_t g, int& kernels, int& work) {
  std::size_t n = 0;
  cuda_check(cudaGraphGetNodes(g, nullptr, &n), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(n);
  if (n) cuda_check(cudaGraphGetNodes(g, nodes.data(), &n), "cudaGraphGetNodes");
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t{};
    cuda_check(cudaGraphNodeGetType(node, &t), "cudaGraphNodeGetType");
    if (t == cudaGraphNodeTypeKernel) ++kernels;
    if (t == cudaGraphNodeTypeKernel || t == cudaGraphNodeTypeMemcpy ||
        t == cudaGraphNodeTypeMemset)
      ++work;
    if (t == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      cuda_check(cudaGraphChildGraphNodeGetGraph(node, &child), "cudaGraphChildGraphNodeGetGraph");
      count_nodes(child, kernels, work);
    }
  }
}

}  // namespace

GraphReplay::GraphReplay(void* stream, const std::function<void()>& call, int launches)
    : stream_(stream), launches_(launches) {
  auto s = static_cast<cudaStream_t>(stream);
  cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  std::string failure;
  try {
    for (int i = 0; i < launches; ++i) call();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  cudaGraph_t g = nullptr;
  cudaError_t end = cudaStreamEndCapture(s, &g);
  graph_ = g;
  if (!failure.empty())
    throw std::runtime_error("cannot capture the arm in a CUDA graph: " + failure);
  if (end != cudaSuccess || !g) {
    cudaGetLastError();  // capture errors are not sticky; clear them
    throw std::runtime_error(std::string("cannot capture the arm in a CUDA graph: ") +
                             cudaGetErrorString(end));
  }
  count_nodes(g, kernel_nodes_, work_nodes_);
  cudaGraphExec_t e = nullptr;
  cuda_check(cudaGraphInstantiate(&e, g, 0), "cudaGraphInstantiate");
  exec_ = e;
}

GraphReplay::~GraphReplay() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
}

void GraphReplay::launch() {
  cuda_check(
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), static_cast<cudaStream_t>(stream_)),
      "cudaGraphLaunch");
}
#else
GraphReplay::GraphReplay(void*, const std::function<void()>&, int launches)
    : stream_(nullptr), launches_(launches) {
  throw std::runtime_error("graph replay needs CUDA");
}
GraphReplay::~GraphReplay() = default;
void GraphReplay::launch() {}
#endif

}  // namespace kq
