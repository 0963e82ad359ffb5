#include "timing/compute_light.hpp"

#include <random>
#include <vector>

#include "device/cuda_check.hpp"
#include "device/memory.hpp"
#include "kq/half.hpp"
#include "kq/matmul_form.hpp"
#include "timing/light.hpp"

#if KQ_HAVE_CUDA
#include <cublasLt.h>

#include "device/toolkit_library.hpp"
#endif

namespace kq {
namespace {

// Large enough to fill every SM with full tiles (ANCHORS.md: cuBLAS's bf16 rate at 4096^3 is
// its 8192^3 rate within 6%), small enough that an f32 product without TF32 takes ~3 ms.
constexpr std::int64_t kSide = 4096;
constexpr std::size_t kWorkspace = std::size_t{32} << 20;

}  // namespace

std::optional<GemmLightType> product_type(const Spec& spec) {
  if (!spec.shaped) return std::nullopt;
  const ix::Program& p = *spec.shaped->program;
  for (const ix::Statement& st : p.statements)
    for (const ix::Node& n : p.nodes)
      if (auto f = ix::match_product(p, st, n))
        return GemmLightType{p.decls.tensors[static_cast<std::size_t>(f->a_tensor)].dtype,
                             spec.shaped->tf32};
  return std::nullopt;
}

std::string gemm_light_what(GemmLightType type) {
  const std::string side = std::to_string(kSide) + "^3";
  switch (type.operands) {
    case DType::bf16:
    case DType::f16:
      return std::string(to_string(type.operands)) + " " + side + " (f32 accumulation)";
    case DType::f32:
      return "f32 " + side + (type.tf32 ? " (TF32)" : " (TF32 off)");
    default:
      return std::string(to_string(type.operands)) + " " + side;
  }
}

#if KQ_HAVE_CUDA

namespace {

// cuBLASLt, loaded when first needed as CUPTI is (device/kernel_profile.cpp): kq starts and
// times every other op where the library is absent.
struct Lt {
  cublasStatus_t (*create)(cublasLtHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasLtHandle_t) = nullptr;
  cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t*, cublasComputeType_t,
                                cudaDataType_t) = nullptr;
  cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t) = nullptr;
  cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t,
                                  int64_t) = nullptr;
  cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t) = nullptr;
  cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t*) = nullptr;
  cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                             const void*, size_t) = nullptr;
  cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t) = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  std::string missing;
};

const Lt& lt() {
  static const Lt l = [] {
    Lt x;
    ToolkitLibrary lib("cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so",
                                    "/usr/local/cuda/lib64/libcublasLt.so.13"});
    lib.require(x.create, "cublasLtCreate");
    lib.require(x.destroy, "cublasLtDestroy");
    lib.require(x.desc_create, "cublasLtMatmulDescCreate");
    lib.require(x.desc_destroy, "cublasLtMatmulDescDestroy");
    lib.require(x.layout_create, "cublasLtMatrixLayoutCreate");
    lib.require(x.layout_destroy, "cublasLtMatrixLayoutDestroy");
    lib.require(x.pref_create, "cublasLtMatmulPreferenceCreate");
    lib.require(x.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    lib.require(x.pref_destroy, "cublasLtMatmulPreferenceDestroy");
    lib.require(x.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    lib.require(x.matmul, "cublasLtMatmul");
    x.missing = lib.missing();
    return x;
  }();
  return l;
}

}  // namespace

struct GemmLight {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout = nullptr;  // every operand: kSide x kSide, column-major
  cublasLtMatmulAlgo_t algo{};
  DeviceMemory a, b, c, workspace;
  double one = 1.0, zero = 0.0;  // alpha and beta, for f64
  float onef = 1.0f, zerof = 0.0f;
  bool f64 = false;
  std::string what;
  ~GemmLight() {
    if (layout) lt().layout_destroy(layout);
    if (desc) lt().desc_destroy(desc);
    if (handle) lt().destroy(handle);
  }
};

namespace {

void lt_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (cuBLASLt status " +
                             std::to_string(static_cast<int>(s)) + ")");
}

// Operands of values in [-1, 1): a product of zeros or of one repeated value would draw less
// power than a real one and run at a clock no arm sees.
DeviceMemory random_operand(DType t, std::uint64_t seed) {
  const std::size_t n = static_cast<std::size_t>(kSide * kSide);
  std::vector<unsigned char> host(n * dtype_size(t));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) store_rounded(t, u(rng), host.data() + i * dtype_size(t));
  DeviceMemory m(Device::cuda, host.size());
  m.upload(host.data(), 0, host.size());
  return m;
}

}  // namespace

std::shared_ptr<GemmLight> make_gemm_light(GemmLightType type, std::string* why) {
  cudaDataType_t data = CUDA_R_32F, scale = CUDA_R_32F;
  cublasComputeType_t compute = type.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  switch (type.operands) {
    case DType::bf16:
      data = CUDA_R_16BF;
      break;
    case DType::f16:
      data = CUDA_R_16F;
      break;
    case DType::f32:
      break;
    case DType::f64:
      data = scale = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    default:
      if (why) *why = "no vendor product for " + std::string(to_string(type.operands));
      return nullptr;
  }
  if (!lt().missing.empty()) {
    if (why) *why = lt().missing;
    return nullptr;
  }
  try {
    auto g = std::make_shared<GemmLight>();
    g->f64 = type.operands == DType::f64;
    lt_check(lt().create(&g->handle), "cublasLtCreate");
    lt_check(lt().desc_create(&g->desc, compute, scale), "cublasLtMatmulDescCreate");
    lt_check(lt().layout_create(&g->layout, data, kSide, kSide, kSide),
             "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t pref = nullptr;
    lt_check(lt().pref_create(&pref), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t ws = kWorkspace;
    lt().pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t hs = lt().heuristic(g->handle, g->desc, g->layout, g->layout, g->layout,
                                             g->layout, pref, 1, &result, &found);
    lt().pref_destroy(pref);
    lt_check(hs, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1) throw std::runtime_error("cuBLASLt's heuristic found no algorithm");
    g->algo = result.algo;
    g->a = random_operand(type.operands, 0xa11ce);
    g->b = random_operand(type.operands, 0xb0b);
    g->c = DeviceMemory(Device::cuda,
                        static_cast<std::size_t>(kSide * kSide) * dtype_size(type.operands));
    g->workspace = DeviceMemory(Device::cuda, std::max<std::size_t>(result.workspaceSize, 256));
    g->what = gemm_light_what(type);
    enqueue_gemm_light(*g, nullptr);  // the first call pays cuBLASLt's set-up
    cuda_check(cudaStreamSynchronize(nullptr), "the vendor GEMM's first call");
    return g;
  } catch (const std::exception& e) {
    rethrow_if_sticky(e);
    if (why) *why = e.what();
    return nullptr;
  }
}

std::unique_ptr<Light> make_compute_light(const std::shared_ptr<GemmLight>& gemm,
                                          bool blocking_kernel,
                                          const std::shared_ptr<Stream>& stream) {
  auto l = std::make_unique<Light>();
  l->device = Device::cuda;
  l->stream = stream;
  l->timer = std::make_unique<SampleTimer>(Device::cuda, stream->handle(), blocking_kernel);
  l->gemm = gemm;
  l->flops = 2.0 * static_cast<double>(kSide) * kSide * kSide;
  l->what = gemm->what;
  return l;
}

void enqueue_gemm_light(GemmLight& g, void* stream) {
  const void* alpha = g.f64 ? static_cast<const void*>(&g.one) : &g.onef;
  const void* beta = g.f64 ? static_cast<const void*>(&g.zero) : &g.zerof;
  lt_check(lt().matmul(g.handle, g.desc, alpha, g.a.data(), g.layout, g.b.data(), g.layout, beta,
                       g.c.data(), g.layout, g.c.data(), g.layout, &g.algo, g.workspace.data(),
                       g.workspace.size(), static_cast<cudaStream_t>(stream)),
           "cublasLtMatmul (the compute light)");
  cuda_check(cudaGetLastError(), "the compute light's launch");
}

#else  // no CUDA: no compute light

struct GemmLight {};

std::shared_ptr<GemmLight> make_gemm_light(GemmLightType, std::string* why) {
  if (why) *why = "this kq was built without CUDA";
  return nullptr;
}

std::unique_ptr<Light> make_compute_light(const std::shared_ptr<GemmLight>&, bool,
                                          const std::shared_ptr<Stream>&) {
  return nullptr;
}

void enqueue_gemm_light(GemmLight&, void*) {}

#endif

}  // namespace kq
