// One cuBLASLt matmul for one problem: its descriptors, the algorithm the heuristic chose for the
// problem's shape and pointer alignment, and a description of that choice for the artifacts.
// kq's row-major C (M x N) = A (M x K) B (K x N) is cuBLASLt's column-major C^T = B^T A^T, so
// cuBLASLt's first operand is B and its second A; a view whose unit stride is along K is read
// transposed.
#pragma once
#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kq/matmul_form.hpp"
#include "kq/status.hpp"
#include "kq/tensor.hpp"

namespace kq::cublaslt {

struct LtProblem {
  ix::MatmulGeometry g;
  DType ab = DType::f32;    // A and B
  DType c = DType::f32;     // C
  DType bias = DType::f32;  // where there is one
  bool has_bias = false;
  bool tf32 = false;  // f32 operands read as TF32 (the spec's compute: tf32)
  std::int64_t align_a = 16, align_b = 16, align_c = 16;  // the pointers' alignment, in bytes
};

// What the heuristic chose, as cuBLASLt names it.
struct LtChoice {
  int algo = -1, tile = -1, splitk = -1, reduction = -1, swizzle = -1, stages = -1, cluster = -1;
  std::size_t workspace = 0;
  float waves = 0;
};

class LtPlan {
 public:
  ~LtPlan();
  // Describes the problem and asks the heuristic (workspace up to `max_workspace`): ok, or
  // unsupported when no algorithm fits (a layout cuBLASLt does not take, an alignment).
  Status create(cublasLtHandle_t handle, const LtProblem& p, std::size_t max_workspace);
  // D = A B (+ bias) on `stream`, with `workspace` of at least choice().workspace bytes.
  Status run(cublasLtHandle_t handle, const void* a, const void* b, const void* bias, void* c,
             void* workspace, cudaStream_t stream) const;
  const LtChoice& choice() const { return choice_; }
  // One markdown table row: the problem and the choice.
  std::string row() const;

 private:
  LtProblem p_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  LtChoice choice_;
};

// "CUBLAS_STATUS_NOT_SUPPORTED" for a status.
std::string status_text(cublasStatus_t s);

}  // namespace kq::cublaslt
