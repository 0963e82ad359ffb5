// A quick bandwidth sweep for the residual_relu kernels of plugins/cuda_fused and
// plugins/inline_ptx, used to choose their launch shapes and cache hints (not part of the build;
// kq's own timing stage is the measurement of record). It times, at n elements (default 2^28):
//   - every residual_relu arm of the three plugins in build/bin/plugins, through the plugin API;
//   - vector_kernel (plugins/cuda_fused/kernels.cuh) over per-thread depth, load and store
//     policy and grid shape;
//   - inline-PTX variants of the load and store cache hints;
//   - a device-to-device cudaMemcpy (8 bytes per element) as the speed of light.
// Each sample: a 256 MiB memset (L2 flush), then the kernel between two events. Configurations
// are interleaved round by round; the median of the rounds is printed with 12 bytes/element.
// Every experimental kernel's output is compared with the scalar kernel's, bit for bit.
//
// Build (from the repository root, after building the plugins):
//   nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -Iplugin-api/include -Iplugins/cuda_fused \
//        -Iplugins/fused_common tools/bench_cuda_fused.cu -o build/bin/bench_cuda_fused -ldl
// Run: build/bin/bench_cuda_fused [log2 n] [rounds]
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "kq/plugin_api.hpp"

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

using namespace kq::fused;

namespace {

__global__ void fill(float* p, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = (static_cast<float>(h & 0xffffff) / 16777216.0f - 0.5f) * 4.0f;
  }
}

__global__ void count_diff(const float* a, const float* b, std::int64_t n, unsigned long long* c) {
  for (std::int64_t i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x)
    if (__float_as_uint(a[i]) != __float_as_uint(b[i])) atomicAdd(c, 1ull);
}

// ---- inline-PTX hint variants -------------------------------------------------------------
// Load hints: 0 nc, 1 nc.L1::no_allocate, 2 nc.L1::no_allocate.L2::256B, 3 nc.L1::no_allocate
// .L2::128B, 4 nc.L1::evict_first.L2::256B, 5 nc.L1::no_allocate + L2 evict_first policy
// .L2::256B, 6 cs.L2::256B, 7 nc.L2::256B, 8 nc.L1::evict_first, 9 nc.L2::128B,
// 10 nc.L1::evict_last, 11 plain ld.global. Store hints: 0 st.global, 1 st.global.cs, 2
// st.global.L1::no_allocate, 3 st.global + L2 evict_first policy.
template <int LH>
__device__ __forceinline__ float4 ldh(const float4* p, unsigned long long pol) {
  float4 v;
#define LD_(s) \
  asm volatile(s " {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p))
  if constexpr (LH == 0)
    LD_("ld.global.nc.v4.f32");
  else if constexpr (LH == 1)
    LD_("ld.global.nc.L1::no_allocate.v4.f32");
  else if constexpr (LH == 2)
    LD_("ld.global.nc.L1::no_allocate.L2::256B.v4.f32");
  else if constexpr (LH == 3)
    LD_("ld.global.nc.L1::no_allocate.L2::128B.v4.f32");
  else if constexpr (LH == 4)
    LD_("ld.global.nc.L1::evict_first.L2::256B.v4.f32");
  else if constexpr (LH == 7)
    LD_("ld.global.nc.L2::256B.v4.f32");
  else if constexpr (LH == 8)
    LD_("ld.global.nc.L1::evict_first.v4.f32");
  else if constexpr (LH == 9)
    LD_("ld.global.nc.L2::128B.v4.f32");
  else if constexpr (LH == 10)
    LD_("ld.global.nc.L1::evict_last.v4.f32");
  else if constexpr (LH == 11)
    LD_("ld.global.v4.f32");
  else if constexpr (LH == 5)
    asm volatile(
        "ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p), "l"(pol));
  else
    LD_("ld.global.cs.L2::256B.v4.f32");
#undef LD_
  return v;
}

template <int SH>
__device__ __forceinline__ void sth(float4* p, float4 v, unsigned long long pol) {
  if constexpr (SH == 0)
    asm volatile("st.global.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
                 "f"(v.w)
                 : "memory");
  else if constexpr (SH == 1)
    asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
                 "f"(v.w)
                 : "memory");
  else if constexpr (SH == 2)
    asm volatile("st.global.L1::no_allocate.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x),
                 "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
  else
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "f"(v.x),
                 "f"(v.y), "f"(v.z), "f"(v.w), "l"(pol)
                 : "memory");
}

template <int U, int T, int LH, int SH>
__global__ void __launch_bounds__(T)
    asm_kernel(const float* x, const float* r, float* out, std::int64_t n) {
  unsigned long long pol = 0;
  if constexpr (LH == 5 || SH == 3)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  const ResidualReluFn f{};
  const std::int64_t nvec = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* r4 = reinterpret_cast<const float4*>(r);
  auto* o4 = reinterpret_cast<float4*>(out);
  constexpr std::int64_t kChunk = std::int64_t{U} * T;
  for (std::int64_t i = blockIdx.x * kChunk + threadIdx.x; i < nvec; i += kChunk * gridDim.x) {
    float4 a[U], b[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (i + k * T < nvec) {
        a[k] = ldh<LH>(x4 + i + k * T, pol);
        b[k] = ldh<LH>(r4 + i + k * T, pol);
      }
#pragma unroll
    for (int k = 0; k < U; ++k)
      if (i + k * T < nvec) sth<SH>(o4 + i + k * T, apply4(f, a[k], b[k]), pol);
  }
}

struct Config {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  bool check = true;
  double bytes_per_elem = 12;
  std::vector<float> ms;
};

int sms() {
  int d = 0, s = 0;
  CK(cudaGetDevice(&d));
  CK(cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, d));
  return s;
}

template <class K>
int resident(K kernel, int threads) {
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, threads, 0));
  return per * sms();
}

struct Bufs {
  float *x, *r, *out, *ref;
  std::int64_t n;
};

template <int U, int T, Load L, Store S>
void add_vector(std::vector<Config>& cs, const Bufs& b, int waves, int carveout = -1) {
  auto k = &vector_kernel<ResidualReluFn, U, T, L, S>;
  if (carveout >= 0)
    CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
  const std::int64_t chunks = (b.n / 4 + std::int64_t{U} * T - 1) / (std::int64_t{U} * T);
  std::int64_t grid =
      waves == 0 ? chunks : std::min<std::int64_t>(chunks, std::int64_t{resident(k, T)} * waves);
  const char* ln = L == Load::cs ? "cs" : L == Load::nc ? "nc" : "plain";
  const char* sn = S == Store::cs ? "cs" : "plain";
  char name[160];
  std::snprintf(name, sizeof name, "vector U=%d T=%d ld.%s st.%s %s (grid %lld)%s", U, T, ln, sn,
                waves == 0 ? "one-pass" : (std::to_string(waves) + "-wave").c_str(),
                static_cast<long long>(grid),
                carveout < 0 ? "" : (" carveout " + std::to_string(carveout)).c_str());
  FlatArgs a{b.x, b.r, b.out, b.n, 0};
  cs.push_back({name, [=](cudaStream_t s) { k<<<static_cast<unsigned>(grid), T, 0, s>>>(a); }});
}

template <int U, int T, int LH, int SH>
void add_asm(std::vector<Config>& cs, const Bufs& b) {
  const std::int64_t grid = (b.n / 4 + std::int64_t{U} * T - 1) / (std::int64_t{U} * T);
  char name[160];
  std::snprintf(name, sizeof name, "asm U=%d T=%d load-hint %d store-hint %d one-pass", U, T, LH,
                SH);
  const float *x = b.x, *r = b.r;
  float* o = b.out;
  const std::int64_t n = b.n;
  cs.push_back({name, [=](cudaStream_t s) {
                  asm_kernel<U, T, LH, SH><<<static_cast<unsigned>(grid), T, 0, s>>>(x, r, o, n);
                }});
}

template <int U, int T, Load L>
void add_scalar(std::vector<Config>& cs, const Bufs& b) {
  auto k = &scalar_kernel<ResidualReluFn, U, T, L, Store::cs>;
  const std::int64_t n = b.n - 1;
  const std::int64_t grid = (n + std::int64_t{U} * T - 1) / (std::int64_t{U} * T);
  char name[160];
  std::snprintf(name, sizeof name, "scalar (x+1 element) U=%d T=%d ld.%s st.cs one-pass", U, T,
                L == Load::nc ? "nc" : "plain");
  FlatArgs a{b.x + 1, b.r, b.out, n, 0};
  cs.push_back(
      {name, [=](cudaStream_t s) { k<<<static_cast<unsigned>(grid), T, 0, s>>>(a); }, false});
}

kq::OpSpec residual_relu_spec() {
  kq::OpSpec s;
  s.op = "residual_relu";
  s.inputs = {"x", "residual"};
  s.outputs = {{"out", {}}};
  s.semantics.text = "relu(x + residual)";
  kq::ExprNode a, b, add, relu;
  a.op = kq::Op::input;
  a.input = 0;
  b.op = kq::Op::input;
  b.input = 1;
  add.op = kq::Op::add;
  add.args[0] = 0;
  add.args[1] = 1;
  relu.op = kq::Op::relu;
  relu.args[0] = 2;
  s.semantics.nodes = {a, b, add, relu};
  s.layouts = {true, 4, {1}};
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int lg = argc > 1 ? std::atoi(argv[1]) : 28;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 25;
  const std::int64_t n = std::int64_t{1} << lg;
  Bufs b{nullptr, nullptr, nullptr, nullptr, n};
  CK(cudaMalloc(&b.x, n * 4));
  CK(cudaMalloc(&b.r, n * 4));
  CK(cudaMalloc(&b.out, n * 4));
  CK(cudaMalloc(&b.ref, n * 4));
  void* flush = nullptr;
  const std::size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  unsigned long long* diff = nullptr;
  CK(cudaMalloc(&diff, sizeof *diff));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  fill<<<4096, 256, 0, st>>>(b.x, n, 1u);
  fill<<<4096, 256, 0, st>>>(b.r, n, 2u);
  scalar_kernel<ResidualReluFn, 1, 256, Load::plain, Store::plain>
      <<<static_cast<unsigned>((n + 255) / 256), 256, 0, st>>>(FlatArgs{b.x, b.r, b.ref, n, 0});
  CK(cudaStreamSynchronize(st));

  std::vector<Config> cs;
  // Plugin arms through the API.
  static const kq::OpSpec spec = residual_relu_spec();
  static kq::ArmList arms;
  for (const char* lib : {"kq_cuda_fused", "kq_inline_ptx", "kq_thrust_transform"}) {
    std::string path = std::string("build/bin/plugins/lib") + lib + ".so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::printf("cannot load %s: %s\n", path.c_str(), dlerror());
      continue;
    }
    auto fn = reinterpret_cast<void (*)(kq::ArmList&)>(
        *static_cast<const void* const*>(dlsym(h, "kq_create_arms")));
    fn(arms);
  }
  const kq::TensorView in[2] = {
      kq::TensorView::contiguous_1d(b.x, n, kq::DType::f32, kq::Device::cuda),
      kq::TensorView::contiguous_1d(b.r, n, kq::DType::f32, kq::Device::cuda)};
  const kq::TensorView out[1] = {
      kq::TensorView::contiguous_1d(b.out, n, kq::DType::f32, kq::Device::cuda)};
  for (auto& a : arms) {
    if (!a->supports(spec).is_ok()) continue;
    kq::Status s = a->prepare(kq::Problem{&spec, {in[0], in[1]}, {out[0]}});
    if (!s.is_ok()) {
      std::printf("%s: prepare: %s\n", a->identity().name.c_str(), s.message().c_str());
      continue;
    }
    kq::IKernelArm* p = a.get();
    cs.push_back({"arm " + a->identity().name, [p, &in, &out](cudaStream_t s) {
                    kq::Status r = p->run(in, out, s);
                    if (!r.is_ok()) std::printf("run: %s\n", r.message().c_str());
                  }});
  }
  // residual_relu arms on offset views: all three one element in (a common head, then float4)
  // and x alone one element in (no common 16-byte phase: the scalar fallback).
  static const kq::TensorView in_all1[2] = {
      kq::TensorView::contiguous_1d(b.x + 1, n - 1, kq::DType::f32, kq::Device::cuda),
      kq::TensorView::contiguous_1d(b.r + 1, n - 1, kq::DType::f32, kq::Device::cuda)};
  static const kq::TensorView out_all1[1] = {
      kq::TensorView::contiguous_1d(b.out + 1, n - 1, kq::DType::f32, kq::Device::cuda)};
  static const kq::TensorView in_x1[2] = {
      kq::TensorView::contiguous_1d(b.x + 1, n - 1, kq::DType::f32, kq::Device::cuda),
      kq::TensorView::contiguous_1d(b.r, n - 1, kq::DType::f32, kq::Device::cuda)};
  static const kq::TensorView out_x1[1] = {
      kq::TensorView::contiguous_1d(b.out, n - 1, kq::DType::f32, kq::Device::cuda)};
  for (auto& a : arms) {
    const std::string nm = a->identity().name;
    if (nm != "cuda_fused_residual_relu_v4_b1024" && nm != "inline_ptx_residual_relu" &&
        nm != "thrust_residual_relu")
      continue;
    kq::IKernelArm* p = a.get();
    if (!p->prepare(kq::Problem{&spec, {in_all1[0], in_all1[1]}, {out_all1[0]}}).is_ok()) continue;
    cs.push_back({"arm " + nm + " all +1 element",
                  [p](cudaStream_t s) {
                    kq::Status r = p->run(in_all1, out_all1, s);
                    if (!r.is_ok()) std::printf("run: %s\n", r.message().c_str());
                  },
                  false});
    cs.push_back({"arm " + nm + " x +1 element",
                  [p](cudaStream_t s) {
                    kq::Status r = p->run(in_x1, out_x1, s);
                    if (!r.is_ok()) std::printf("run: %s\n", r.message().c_str());
                  },
                  false});
  }
  // The silu_mul (12 B/elem) and leaky_relu (8 B/elem) arms, for information (not checked).
  static kq::OpSpec silu = spec, leaky = spec;
  silu.op = "silu_mul";
  silu.inputs = {"x", "y"};
  silu.semantics.text = "silu(x) * y";
  silu.semantics.nodes[2] = silu.semantics.nodes[1];  // x, silu(x), y, x*y
  silu.semantics.nodes[1] = kq::ExprNode{};
  silu.semantics.nodes[1].op = kq::Op::silu;
  silu.semantics.nodes[1].args[0] = 0;
  silu.semantics.nodes[3].op = kq::Op::mul;
  silu.semantics.nodes[3].args[0] = 1;
  silu.semantics.nodes[3].args[1] = 2;
  leaky.op = "leaky_relu";
  leaky.inputs = {"x"};
  leaky.semantics.text = "select(x > 0, x, 0.01 * x)";
  {
    kq::ExprNode in0, c0, gt, c1, mul, sel;
    in0.op = kq::Op::input;
    in0.input = 0;
    c0.op = kq::Op::constant;
    gt.op = kq::Op::gt;
    gt.args[0] = 0;
    gt.args[1] = 1;
    c1.op = kq::Op::constant;
    c1.value = 0.01;
    mul.op = kq::Op::mul;
    mul.args[0] = 4;
    mul.args[1] = 5;
    sel.op = kq::Op::select;
    sel.args[0] = 2;
    sel.args[1] = 3;
    sel.args[2] = 6;
    leaky.semantics.nodes = {in0, c0, gt, in0, c1, in0, mul, sel};
  }
  static const kq::TensorView in1[1] = {in[0]};
  for (auto& a : arms) {
    const bool is_silu = a->supports(silu).is_ok(), is_leaky = a->supports(leaky).is_ok();
    if (!is_silu && !is_leaky) continue;
    kq::Problem pr = is_silu ? kq::Problem{&silu, {in[0], in[1]}, {out[0]}}
                             : kq::Problem{&leaky, {in[0]}, {out[0]}};
    if (!a->prepare(pr).is_ok()) continue;
    kq::IKernelArm* p = a.get();
    cs.push_back({"arm " + a->identity().name,
                  [p, is_silu, &in, &out](cudaStream_t s) {
                    kq::Status r = is_silu ? p->run(in, out, s) : p->run(in1, out, s);
                    if (!r.is_ok()) std::printf("run: %s\n", r.message().c_str());
                  },
                  false, is_silu ? 12.0 : 8.0});
  }
  // Copy, the speed of light: 8 bytes per element.
  cs.push_back({"cudaMemcpy D2D (8 B/elem)",
                [&b](cudaStream_t s) {
                  CK(cudaMemcpyAsync(b.out, b.x, b.n * 4, cudaMemcpyDeviceToDevice, s));
                },
                false, 8});

  // vector_kernel: the shapes the arms use, and the runners-up (rounds 1-4 found: one pass
  // beats grid-stride by ~5%, ld.global.cs loads cost ~10%, nc and plain loads tie, 1024-thread
  // blocks gain ~0.4% over 256, plain stores maybe 0.3% over st.global.cs).
  add_vector<1, 1024, Load::plain, Store::plain>(cs, b, 0);
  add_vector<1, 1024, Load::plain, Store::plain>(cs, b, 0);  // twice: the noise
  add_vector<1, 1024, Load::plain, Store::cs>(cs, b, 0);
  add_vector<1, 1024, Load::nc, Store::plain>(cs, b, 0);
  add_vector<2, 1024, Load::plain, Store::plain>(cs, b, 0);
  add_vector<2, 1024, Load::nc, Store::plain>(cs, b, 0);
  add_vector<1, 512, Load::plain, Store::plain>(cs, b, 0);
  add_vector<1, 256, Load::plain, Store::plain>(cs, b, 0);
  add_vector<4, 256, Load::plain, Store::plain>(cs, b, 0);
  add_vector<1, 768, Load::plain, Store::plain>(cs, b, 0);
  add_vector<1, 1024, Load::plain, Store::plain>(cs, b, 0, 0);
  add_vector<1, 1024, Load::nc, Store::plain>(cs, b, 0, 0);
  add_vector<1, 1024, Load::nc, Store::plain>(cs, b, 0, 100);
  // Inline-PTX hints.
  add_asm<1, 1024, 7, 0>(cs, b);
  add_asm<1, 1024, 5, 0>(cs, b);
  add_asm<1, 1024, 0, 0>(cs, b);
  add_asm<1, 1024, 7, 3>(cs, b);
  add_asm<2, 1024, 7, 0>(cs, b);
  // The scalar kernel with x one element off (the fallback when offsets differ); not checked.
  add_scalar<4, 1024, Load::nc>(cs, b);
  add_scalar<4, 1024, Load::plain>(cs, b);

  // Correctness of each configuration, once.
  for (auto& c : cs) {
    CK(cudaMemsetAsync(b.out, 0xff, n * 4, st));
    c.launch(st);
    CK(cudaGetLastError());
    if (!c.check) continue;
    CK(cudaMemsetAsync(diff, 0, sizeof *diff, st));
    count_diff<<<4096, 256, 0, st>>>(b.out, b.ref, n, diff);
    unsigned long long h = 0;
    CK(cudaMemcpyAsync(&h, diff, sizeof h, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    if (h) std::printf("MISMATCH %llu elements: %s\n", h, c.name.c_str());
  }

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<std::size_t> order(cs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int r = 0; r < rounds; ++r) {
    std::rotate(order.begin(), order.begin() + (r * 7) % order.size(), order.end());
    for (std::size_t i : order) {
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, st));
      CK(cudaEventRecord(e0, st));
      cs[i].launch(st);
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0) cs[i].ms.push_back(ms);  // round 0 is the warm-up
    }
  }
  std::printf("n = 2^%d, %d rounds, median (min) us, TB/s at the bytes per element shown\n", lg,
              rounds - 1);
  std::vector<std::pair<double, std::string>> rows;
  for (auto& c : cs) {
    std::sort(c.ms.begin(), c.ms.end());
    const double med = c.ms[c.ms.size() / 2] * 1e3, mn = c.ms.front() * 1e3;
    const double tbs = c.bytes_per_elem * n / (med * 1e-6) / 1e12;
    char line[256];
    std::snprintf(line, sizeof line, "%8.1f (%8.1f) us  %5.3f TB/s  %s", med, mn, tbs,
                  c.name.c_str());
    rows.push_back({med, line});
  }
  std::sort(rows.begin(), rows.end());
  for (auto& [m, l] : rows) std::printf("%s\n", l.c_str());
  return 0;
}
