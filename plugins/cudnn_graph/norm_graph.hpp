// A recognised norm (norm_match.hpp) as a cuDNN backend operation graph of one
// CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR: mode LAYER_NORM or RMS_NORM, phase TRAINING
// when the spec's statistics are outputs, INFERENCE when they are temporaries. The rows x cols
// contiguous elements of x and y are the 4-D tensor [rows, cols, 1, 1] (strides [cols, 1, cols,
// cols], as cudnn-frontend's norm samples lay out [batch * seq, hidden]); the weight and bias are
// [1, cols, 1, 1], the statistics [rows, 1, 1, 1] in FLOAT, epsilon a by-value FLOAT scalar.
// Layer norm always gets a weight and a bias, RMS norm a weight: where the spec has none the arm
// binds buffers of ones and zeros. Every failing call names the tensor or operation and the
// attribute (backend.hpp).
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "graph_builder.hpp"
#include "norm_match.hpp"

namespace kq::cudnn_graph {

inline constexpr std::int64_t kNormUidX = 1, kNormUidScale = 2, kNormUidBias = 3, kNormUidEps = 4,
                              kNormUidY = 5, kNormUidMean = 6, kNormUidInvVariance = 7;

struct NormDims {
  std::int64_t rows = 0;  // x's first extent
  std::int64_t cols = 0;  // the product of the others: the elements each row is normalised over
};

// A finalized graph and everything it refers to. Not movable once built: the variant pack points
// at `eps` (a by-value tensor takes a host pointer), so it is held through a pointer.
struct NormGraph {
  NormGraph() = default;
  NormGraph(const NormGraph&) = delete;
  NormGraph& operator=(const NormGraph&) = delete;

  NormForm form;
  std::vector<Desc> keep;  // tensors and the operation, in creation order
  Desc graph;
  ScalarSlot eps;
  std::vector<std::string> lines;  // the tensors and the operation, for the notes
};

// The device pointers a variant pack binds; bias, mean and inv_variance only where the graph
// has them (layer norm; training).
struct NormPointers {
  void* x = nullptr;
  void* scale = nullptr;
  void* bias = nullptr;
  void* y = nullptr;
  void* mean = nullptr;
  void* inv_variance = nullptr;
};

cudnnDataType_t cudnn_type(DType t);

// Builds and finalizes the graph; `alignment` is CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT of the real
// tensors. A status in cuDNN's NOT_SUPPORTED family comes back unsupported, any other failure
// as an error; both carry cuDNN's message and the tensor and attribute involved.
Status build_norm_graph(cudnnHandle_t handle, const NormMatch& m, const NormDims& d,
                        std::int64_t alignment, NormGraph& out);

// A finalized variant pack binding the graph's tensors to these pointers.
Status make_norm_pack(const NormGraph& g, const NormPointers& p, void* workspace, Desc& out);

// unsupported with the same message where `s` is an error carrying a NOT_SUPPORTED status.
Status decline_if_not_supported(Status s);

}  // namespace kq::cudnn_graph
