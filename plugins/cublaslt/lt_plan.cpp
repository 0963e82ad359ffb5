#include "lt_plan.hpp"

#include <algorithm>
#include <cstdio>

namespace kq::cublaslt {
namespace {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f64:
      return CUDA_R_64F;
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

// cuBLASLt's view of one operand: how it is transposed and its column-major layout.
struct Operand {
  cublasOperation_t op = CUBLAS_OP_N;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
};

// A kq matrix (rows x cols, strides rs and cs) read as the transpose of itself in column-major
// terms: unit stride along its columns (row-major) is an untransposed cols x rows layout;
// unit stride along its rows (column-major) is a rows x cols layout read transposed. A dim of
// extent 1 takes any stride. Null when neither stride is 1.
bool transposed_view(const ix::MatrixView& m, Operand& o) {
  if (m.cs == 1 || m.cols == 1) {
    o = {CUBLAS_OP_N, static_cast<std::uint64_t>(m.cols), static_cast<std::uint64_t>(m.rows),
         m.rows == 1 ? std::max<std::int64_t>(m.cols, 1) : m.rs};
    return o.ld >= static_cast<std::int64_t>(o.rows);
  }
  if (m.rs == 1 || m.rows == 1) {
    o = {CUBLAS_OP_T, static_cast<std::uint64_t>(m.rows), static_cast<std::uint64_t>(m.cols),
         m.cols == 1 ? std::max<std::int64_t>(m.rows, 1) : m.cs};
    return o.ld >= static_cast<std::int64_t>(o.rows);
  }
  return false;
}

Status lt(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  if (s == CUBLAS_STATUS_NOT_SUPPORTED)
    return Status::unsupported(std::string(what) + ": " + status_text(s));
  return Status::error(std::string(what) + ": " + status_text(s));
}

template <typename T>
Status set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const T& v, const char* w) {
  return lt(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof v), w);
}

Status layout(const Operand& o, DType t, std::int64_t batch, std::int64_t batch_stride,
              cublasLtMatrixLayout_t& out) {
  Status s = lt(cublasLtMatrixLayoutCreate(&out, cuda_type(t), o.rows, o.cols, o.ld),
                "cublasLtMatrixLayoutCreate");
  if (!s.is_ok() || batch == 1) return s;
  const std::int32_t count = static_cast<std::int32_t>(batch);
  s = lt(cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                          sizeof count),
         "batch count");
  if (s.is_ok())
    s = lt(cublasLtMatrixLayoutSetAttribute(out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &batch_stride, sizeof batch_stride),
           "batch stride");
  return s;
}

int config(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t what) {
  std::uint32_t v = 0;  // every attribute read here fits 32 bits
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&a, what, &v, sizeof v, &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return static_cast<int>(v);
}

}  // namespace

std::string status_text(cublasStatus_t s) {
  const char* name = cublasLtGetStatusName(s);
  return name ? name : "cuBLAS status " + std::to_string(static_cast<int>(s));
}

LtPlan::~LtPlan() {
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  for (cublasLtMatrixLayout_t l : {first_, second_, out_})
    if (l) cublasLtMatrixLayoutDestroy(l);
}

Status LtPlan::create(cublasLtHandle_t handle, const LtProblem& p, std::size_t max_workspace) {
  p_ = p;
  // cuBLASLt computes C^T (N x M) = B^T A^T: its first operand is B, its second A.
  Operand first, second, out;
  if (!transposed_view(p.g.b, first) || !transposed_view(p.g.a, second))
    return Status::unsupported("an operand with no unit stride (cuBLASLt reads columns or rows)");
  if (!transposed_view(p.g.c, out) || out.op != CUBLAS_OP_N)
    return Status::unsupported("C must be row-major (unit stride along N)");
  const bool f64 = p.ab == DType::f64;
  const cublasComputeType_t compute = f64      ? CUBLAS_COMPUTE_64F
                                      : p.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                               : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale = f64 ? CUDA_R_64F : CUDA_R_32F;
  Status s = lt(cublasLtMatmulDescCreate(&desc_, compute, scale), "cublasLtMatmulDescCreate");
  if (s.is_ok()) s = set(desc_, CUBLASLT_MATMUL_DESC_TRANSA, first.op, "transa");
  if (s.is_ok()) s = set(desc_, CUBLASLT_MATMUL_DESC_TRANSB, second.op, "transb");
  if (s.is_ok() && p.has_bias) {
    s = set(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS, "epilogue");
    if (s.is_ok())
      s = set(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, cuda_type(p.bias), "bias type");
  }
  if (s.is_ok()) s = layout(first, p.ab, p.g.batch, p.g.b.batch_stride, first_);
  if (s.is_ok()) s = layout(second, p.ab, p.g.batch, p.g.a.batch_stride, second_);
  if (s.is_ok()) s = layout(out, p.c, p.g.batch, p.g.c.batch_stride, out_);
  if (!s.is_ok()) return s;

  cublasLtMatmulPreference_t pref = nullptr;
  s = lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  auto pref_set = [&](cublasLtMatmulPreferenceAttributes_t a, auto v, const char* w) {
    if (s.is_ok()) s = lt(cublasLtMatmulPreferenceSetAttribute(pref, a, &v, sizeof v), w);
  };
  pref_set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<std::uint64_t>(max_workspace),
           "workspace");
  pref_set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, static_cast<std::uint32_t>(p.align_b),
           "alignment of B");
  pref_set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, static_cast<std::uint32_t>(p.align_a),
           "alignment of A");
  pref_set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, static_cast<std::uint32_t>(p.align_c),
           "alignment of C");
  pref_set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, static_cast<std::uint32_t>(p.align_c),
           "alignment of D");
  // A split-K algorithm may sum its partial products in the output's type; for 16-bit outputs
  // that rounds partial sums to 16 bits, outside a contract that computes in f32 (on the H200
  // the heuristic chose it for bf16 at 1025^3, and kq rejected the result).
  // With a bias epilogue on 16-bit outputs even the f32 split-K reduction lost the product's
  // precision before the bias (H200: linear_bias_bf16 at 31 x 2 x 7, split-K 16, 7 ulps off
  // under cancellation): there no split-K at all.
  if (p.c == DType::f16 || p.c == DType::bf16)
    pref_set(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
             static_cast<std::uint32_t>(p.has_bias ? 0
                                                   : CUBLASLT_REDUCTION_SCHEME_MASK &
                                                         ~CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE),
             "reduction schemes");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s.is_ok())
    s = lt(cublasLtMatmulAlgoGetHeuristic(handle, desc_, first_, second_, out_, out_, pref, 1,
                                          &result, &found),
           "cublasLtMatmulAlgoGetHeuristic");
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (!s.is_ok()) return s;
  if (found == 0) return Status::unsupported("cuBLASLt's heuristic found no algorithm");
  algo_ = result.algo;
  choice_.algo = config(algo_, CUBLASLT_ALGO_CONFIG_ID);
  choice_.tile = config(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID);
  choice_.splitk = config(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  choice_.reduction = config(algo_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  choice_.swizzle = config(algo_, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  choice_.stages = config(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  choice_.cluster = config(algo_, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  choice_.workspace = result.workspaceSize;
  choice_.waves = result.wavesCount;
  return Status::ok();
}

Status LtPlan::run(cublasLtHandle_t handle, const void* a, const void* b, const void* bias, void* c,
                   void* workspace, cudaStream_t stream) const {
  if (p_.has_bias) {
    Status s = set(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias, "bias pointer");
    if (!s.is_ok()) return s;
  }
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const bool f64 = p_.ab == DType::f64;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = f64 ? static_cast<const void*>(&zero64) : &zero32;
  return lt(cublasLtMatmul(handle, desc_, alpha, b, first_, a, second_, beta, c, out_, c, out_,
                           &algo_, workspace, choice_.workspace, stream),
            "cublasLtMatmul");
}

std::string LtPlan::row() const {
  char text[512];
  std::snprintf(text, sizeof text,
                "| %lld | %lld | %lld | %lld | %lld/%lld/%lld | %d | %d | %d | %d | %d | %d | %d "
                "| %zu | %.2f |\n",
                static_cast<long long>(p_.g.batch), static_cast<long long>(p_.g.M),
                static_cast<long long>(p_.g.N), static_cast<long long>(p_.g.K),
                static_cast<long long>(p_.align_a), static_cast<long long>(p_.align_b),
                static_cast<long long>(p_.align_c), choice_.algo, choice_.tile, choice_.splitk,
                choice_.reduction, choice_.swizzle, choice_.stages, choice_.cluster,
                choice_.workspace, static_cast<double>(choice_.waves));
  return text;
}

}  // namespace kq::cublaslt
