// The spec's expression (a post-order node list) as a cuDNN backend operation graph of pointwise
// operations. Inputs and the output are real tensors of the spec's dtype (FLOAT, HALF or
// BFLOAT16; everything else FLOAT, the compute type) laid out by a Shaping (the same contiguous
// elements seen as, say, NHWC {N/32, 32, 1, 1}); intermediates are virtual tensors; constants are
// pass-by-value scalar tensors broadcast against the others. Sub-expressions made of constants only
// are folded on the host first (kq/expr_fold.hpp).
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend.hpp"
#include "kq/op_spec.hpp"

namespace kq::cudnn_graph {

// One way to see N contiguous elements as a cuDNN tensor (3 or 4 dimensions).
struct Shaping {
  std::string name;
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> strides;
};

// How relu is lowered. native: CUDNN_POINTWISE_RELU_FWD with lower clip 0, which gives
// relu(-0) = -0 (measured on the H200, cuDNN 9.14). exact: RELU_FWD followed by ADD(+0), which
// turns -0 into +0 and leaves NaN, infinities and every other value as they are.
enum class ReluLowering { native, exact };

struct GraphOptions {
  std::int64_t alignment = 16;  // CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT of the real tensors
  ReluLowering relu = ReluLowering::native;
};

// A by-value scalar lives in its own 16-byte slot: the variant pack points at it.
struct alignas(16) ScalarSlot {
  float value = 0.0f;
};

// A finalized operation graph and everything it refers to; move-only.
struct BuiltGraph {
  std::vector<Desc> keep;  // tensors, pointwise descriptors and operations, in creation order
  Desc graph;
  std::vector<std::int64_t> input_uids;  // uid of spec input k, -1 when the expression skips it
  std::int64_t output_uid = 0;
  std::vector<std::int64_t> scalar_uids;
  std::vector<ScalarSlot> scalars;  // parallel to scalar_uids; never grows after the build
  std::vector<std::string> ops;     // one line per pointwise operation, for the notes
  std::int64_t engine_count = -1;   // CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT
};

// A comparison (lt, le, gt, ge, eq, ne): cuDNN's CMP_* give a BOOLEAN mask, 1 or 0.
inline bool is_comparison(Op op) {
  return op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge || op == Op::eq ||
         op == Op::ne;
}

// ok when the expression is well-formed over `input_count` inputs (kq::expr_problem,
// kq/expr_checks.hpp) and every node has a cuDNN pointwise lowering; otherwise unsupported, with
// the reason.
Status check_expression(const Expr& e, std::size_t input_count);

// Builds and finalizes the graph of `spec.semantics` on `shape`. Errors carry cuDNN's message.
Status build_graph(cudnnHandle_t handle, const OpSpec& spec, const Shaping& shape,
                   const GraphOptions& options, BuiltGraph& out);

}  // namespace kq::cudnn_graph
