// cublaslt: the vendor's matrix product for every format-2 spec that is one (kq/matmul_form.hpp:
// batched, transposed operands, flattened m dims, + bias[n]), through cublasLtMatmul with the
// heuristic's first algorithm for the problem's shape and pointer alignment. A and B of one type
// (f32, f16, bf16 or f64), C of that type; f16 and bf16 accumulate in f32, f32 in f32 with TF32
// off (CUBLAS_COMPUTE_32F), f64 in f64. The bias goes in the BIAS epilogue, copied to an aligned
// buffer first where its pointer is not 16-byte aligned. gelu is declined: cuBLASLt's GELU
// epilogue is the tanh approximation and the specs' gelu is the erf form. The choice per problem
// (algorithm, tile, split-K, reduction scheme, stages, cluster, workspace) is an artifact.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kq/build_info.hpp"
#include "kq/export.hpp"
#include "kq/guarded_arm.hpp"
#include "kq/matmul_form.hpp"
#include "lt_plan.hpp"

namespace kq::cublaslt {
namespace {

constexpr std::size_t kWorkspace = std::size_t{32} << 20;  // cuBLAS's advice for Hopper

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

Status cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  cudaGetLastError();
  return Status::error(std::string(what) + ": " + cuda_text(e));
}

// The largest power of two up to 256 that divides the address.
std::int64_t alignment(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::int64_t k = 1;
  while (k < 256 && a % static_cast<std::uintptr_t>(k * 2) == 0) k *= 2;
  return k;
}

bool gemm_type(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
}

std::vector<DType> dtypes(const ix::Program& p, ix::Role role) {
  std::vector<DType> out;
  for (const ix::TensorDecl& t : p.decls.tensors)
    if (t.role == role) out.push_back(t.dtype);
  return out;
}

// The form, or why the spec is not one this arm computes.
Status recognise(const OpSpec& spec, ix::MatmulForm& f) {
  if (!spec.program) return Status::unsupported("format-2 (shaped) specs only");
  std::string why;
  const std::optional<ix::MatmulForm> m = ix::match_matmul(*spec.program, &why);
  if (!m) return Status::unsupported("computes a matrix product only: " + why);
  if (m->gelu)
    return Status::unsupported(
        "gelu: cuBLASLt's GELU epilogue is the tanh approximation, the spec's gelu the erf form");
  const std::vector<DType> in = dtypes(*spec.program, ix::Role::input);
  const DType ab = in[static_cast<std::size_t>(m->a)];
  const DType c = dtypes(*spec.program, ix::Role::output)[0];
  if (!gemm_type(ab) || in[static_cast<std::size_t>(m->b)] != ab || c != ab)
    return Status::unsupported("A, B and C of one type (f32, f16, bf16 or f64)");
  if (m->bias >= 0 && in[static_cast<std::size_t>(m->bias)] != c)
    return Status::unsupported("a bias of C's type");
  const DType want = ab == DType::f64 ? DType::f64 : DType::f32;
  if (spec.compute != want)
    return Status::unsupported("computes " + std::string(to_string(ab)) + " products in " +
                               std::string(to_string(want)) + ", and the spec's compute type is " +
                               std::string(to_string(spec.compute)));
  f = *m;
  return Status::ok();
}

class CublasLtArm final : public GuardedArm {
 public:
  CublasLtArm() : GuardedArm(Device::cuda) {}
  ~CublasLtArm() override {
    plans_.clear();
    if (workspace_) cudaFree(workspace_);
    if (bias_copy_) cudaFree(bias_copy_);
    if (handle_) cublasLtDestroy(handle_);
  }

  ArmIdentity identity() const override {
    return build::identity("cublaslt", "cublaslt", Device::cuda, "1");
  }

 protected:
  bool computes_shaped() const override { return true; }

  Status on_supports(const OpSpec& spec) const override {
    ix::MatmulForm f;
    return recognise(spec, f);
  }

  Status on_prepare(const Problem& problem) override {
    Status s = recognise(spec(), form_);
    tf32_ = spec().tf32;
    if (!s.is_ok()) return s;
    if (!handle_) s = lt_status(cublasLtCreate(&handle_), "cublasLtCreate");
    if (s.is_ok() && !workspace_) s = cuda(cudaMalloc(&workspace_, kWorkspace), "workspace");
    if (!s.is_ok()) return s;
    LtProblem p;
    s = describe(problem.inputs, problem.outputs[0], p);
    if (!s.is_ok() || p.g.M * p.g.N * p.g.batch == 0 || p.g.K == 0) return s;
    const std::size_t bias_bytes = static_cast<std::size_t>(p.g.N) * dtype_size(p.bias);
    if (p.has_bias && bias_bytes > bias_capacity_) {
      if (bias_copy_) cudaFree(bias_copy_);
      bias_copy_ = nullptr;
      bias_capacity_ = 0;
      s = cuda(cudaMalloc(&bias_copy_, bias_bytes), "bias buffer");
      if (s.is_ok()) bias_capacity_ = bias_bytes;
    }
    if (!s.is_ok()) return s;
    const Key key = key_of(p);
    if (plans_.count(key)) return Status::ok();
    auto plan = std::make_unique<LtPlan>();
    s = plan->create(handle_, p, kWorkspace);
    if (!s.is_ok()) return s;
    plans_.emplace(key, std::move(plan));
    return Status::ok();
  }

  Status on_run(std::span<const TensorView> in, std::span<const TensorView> out,
                void* stream) override {
    const auto st = static_cast<cudaStream_t>(stream);
    LtProblem p;
    Status s = describe(std::vector<TensorView>(in.begin(), in.end()), out[0], p);
    if (!s.is_ok()) return s;
    const void* bias = p.has_bias ? in[static_cast<std::size_t>(form_.bias)].data : nullptr;
    if (p.g.K == 0) return fill(p, bias, out[0].data, st);
    auto it = plans_.find(key_of(p));
    if (it == plans_.end())
      return Status::unsupported("not prepared for this shape, these strides and alignments");
    if (bias && alignment(bias) < 16) {
      s = cuda(
          cudaMemcpyAsync(bias_copy_, bias, static_cast<std::size_t>(p.g.N) * dtype_size(p.bias),
                          cudaMemcpyDeviceToDevice, st),
          "copying the bias to an aligned buffer");
      if (!s.is_ok()) return s;
      bias = bias_copy_;
    }
    s = it->second->run(handle_, in[static_cast<std::size_t>(form_.a)].data,
                        in[static_cast<std::size_t>(form_.b)].data, bias, out[0].data, workspace_,
                        st);
    if (!s.is_ok()) return s;
    return cuda(cudaGetLastError(), "after cublasLtMatmul");
  }

  std::vector<Artifact> on_artifacts() const override {
    std::string table =
        "# cuBLASLt's choices\n\nOne row per prepared problem: the heuristic's first algorithm "
        "(cublasLtMatmulAlgoGetHeuristic) for its shape and pointer alignments (A/B/C, bytes). "
        "Numbers are cuBLASLt's ids (cublasLtMatmulAlgoConfigAttributes_t). For 16-bit "
        "outputs the output-type reduction scheme (4: split-K partial sums rounded to 16 bits) "
        "is excluded from the search.\n\n"
        "| batch | M | N | K | align | algo | tile | split-K | reduction | swizzle | stages | "
        "cluster | workspace | waves |\n"
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& [key, plan] : plans_) table += plan->row();
    const int v = static_cast<int>(cublasLtGetVersion());
    return {{"choice", "heuristic.md", table},
            {"flags", "flags.txt",
             std::string(build::compile_flags()) + "\ncuBLASLt headers " +
                 std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) +
                 ", runtime " + std::to_string(v) + "\n"}};
  }

 private:
  // What a plan depends on: the geometry (strides included) and the pointers' alignments.
  using Key = std::vector<std::int64_t>;

  static Status lt_status(cublasStatus_t s, const char* what) {
    if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
    return Status::error(std::string(what) + ": " + status_text(s));
  }

  static Key key_of(const LtProblem& p) {
    const ix::MatmulGeometry& g = p.g;
    return {g.batch,
            g.M,
            g.N,
            g.K,
            g.a.rs,
            g.a.cs,
            g.a.batch_stride,
            g.b.rs,
            g.b.cs,
            g.b.batch_stride,
            g.c.rs,
            g.c.cs,
            g.c.batch_stride,
            p.align_a,
            p.align_b,
            p.align_c};
  }

  Status describe(const std::vector<TensorView>& in, const TensorView& c, LtProblem& p) const {
    std::string why;
    const std::optional<ix::MatmulGeometry> g = ix::matmul_geometry(form_, in, c, &why);
    if (!g) return Status::unsupported(why);
    p.g = *g;
    p.ab = in[static_cast<std::size_t>(form_.a)].dtype;
    p.c = c.dtype;
    p.tf32 = tf32_ && p.ab == DType::f32;
    p.has_bias = form_.bias >= 0;
    if (p.has_bias) {
      p.bias = in[static_cast<std::size_t>(form_.bias)].dtype;
      if (p.g.N > 1 && p.g.bias.cs != 1)
        return Status::unsupported("a bias of unit stride (cuBLASLt reads a dense vector)");
    }
    p.align_a = alignment(in[static_cast<std::size_t>(form_.a)].data);
    p.align_b = alignment(in[static_cast<std::size_t>(form_.b)].data);
    p.align_c = alignment(c.data);
    return Status::ok();
  }

  // K = 0: every element of C is the empty sum, 0, plus the bias. C's rows are written one
  // memset or copy each (these are small qualification cases).
  static Status fill(const LtProblem& p, const void* bias, void* c, cudaStream_t st) {
    const std::size_t es = dtype_size(p.c);
    const std::size_t row = static_cast<std::size_t>(p.g.N) * es;
    for (std::int64_t g = 0; g < p.g.batch; ++g)
      for (std::int64_t m = 0; m < p.g.M; ++m) {
        char* dst = static_cast<char*>(c) +
                    static_cast<std::size_t>(g * p.g.c.batch_stride + m * p.g.c.rs) * es;
        if (p.g.N > 1 && p.g.c.cs != 1) return Status::unsupported("C must be row-major");
        const cudaError_t e = bias ? cudaMemcpyAsync(dst, bias, row, cudaMemcpyDeviceToDevice, st)
                                   : cudaMemsetAsync(dst, 0, row, st);
        if (Status s = cuda(e, "writing C for K = 0"); !s.is_ok()) return s;
      }
    return Status::ok();
  }

  ix::MatmulForm form_;
  bool tf32_ = false;  // compute: tf32: f32 products on the tensor cores
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  void* bias_copy_ = nullptr;  // where a bias not 16-byte aligned is copied
  std::size_t bias_capacity_ = 0;
  std::map<Key, std::unique_ptr<LtPlan>> plans_;
};

void make_arms(ArmList& out) { out.push_back(std::make_unique<CublasLtArm>()); }

}  // namespace
}  // namespace kq::cublaslt

KQ_EXPORT_ARMS(kq::cublaslt::make_arms)
