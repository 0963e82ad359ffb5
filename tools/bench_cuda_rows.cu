// A quick bandwidth sweep for the cuda_rows kernels (plugins/cuda_rows/kernels.cuh), used to
// choose their shapes (not part of the build; kq's own timing stage is the measurement of
// record). At M x N (default 32768 x 4096) it times softmax, layer norm and RMS norm in bf16 and
// softmax in f32 through resident_kernel over block shape and grid (a block per row, or a
// persistent grid of the blocks that fit at once), beside a device-to-device cudaMemcpy of the
// same bytes (x read, y written) as the light. Shapes of other threads per block reduce in
// another order, so their bits may differ from the first variant's.
// Each sample: a 256 MiB memset (L2 flush), then the kernel between two events. Configurations
// are interleaved round by round; the median of the rounds is printed. Every variant's y is
// compared bit for bit with the first variant of its op and dtype.
//
// Build (from the repository root):
//   nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -Iplugin-api/include -Iplugins/cuda_rows \
//        -Iplugins/fused_common -Iplugins/cuda_common tools/bench_cuda_rows.cu -o bench_rows
// Run: ./bench_rows [M] [N] [rounds]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels.cuh"

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

using namespace kq::rows;

namespace {

template <class T>
__global__ void fill(T* p, std::int64_t n, unsigned seed, float scale) {
  for (std::int64_t i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float v = (static_cast<float>(h & 0xffffff) / 16777216.0f - 0.5f) * scale;
    if constexpr (std::is_same_v<T, float>)
      p[i] = v;
    else
      p[i] = __float2bfloat16_rn(v);
  }
}

__global__ void count_diff(const unsigned char* a, const unsigned char* b, std::int64_t n,
                           unsigned long long* c) {
  for (std::int64_t i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x)
    if (a[i] != b[i]) atomicAdd(c, 1ull);
}

int sms() {
  int d = 0, s = 0;
  CK(cudaGetDevice(&d));
  CK(cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, d));
  return s;
}

struct Config {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  void* y = nullptr;          // the output to compare
  const void* ref = nullptr;  // the first variant's output (null: this is the first)
  std::int64_t bytes = 0;
  std::vector<float> ms;
};

struct Problem {
  RowOp op;
  int elem;  // bytes
  RowArgs a;
  void* ref;  // the first variant's y
  void* out;  // the others'
};

template <RowOp OP, class T, int THREADS, int VPT>
void add_resident(std::vector<Config>& cs, Problem& p, bool first, int waves) {
  auto k = &resident_kernel<OP, T, THREADS, VPT>;
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, THREADS, 0));
  const std::int64_t grid =
      waves == 0 ? p.a.rows : std::min<std::int64_t>(p.a.rows, std::int64_t{per} * sms() * waves);
  RowArgs a = p.a;
  a.y = first ? p.ref : p.out;
  char name[160];
  std::snprintf(name, sizeof name, "%s %s resident<%d,%d> grid %lld (%d/SM)", to_string(OP),
                p.elem == 4 ? "f32" : "bf16", THREADS, VPT, static_cast<long long>(grid), per);
  cs.push_back({name, [=](cudaStream_t s) { k<<<static_cast<unsigned>(grid), THREADS, 0, s>>>(a); },
                a.y, first ? nullptr : p.ref, 2 * a.rows * a.n * p.elem});
}

template <class T>
Problem make_problem(RowOp op, std::int64_t m, std::int64_t n) {
  Problem p{op, static_cast<int>(sizeof(T)), {}, nullptr, nullptr};
  void *x, *w, *b, *mean, *rstd;
  CK(cudaMalloc(&x, m * n * sizeof(T)));
  CK(cudaMalloc(&p.ref, m * n * sizeof(T)));
  CK(cudaMalloc(&p.out, m * n * sizeof(T)));
  CK(cudaMalloc(&w, n * sizeof(T)));
  CK(cudaMalloc(&b, n * sizeof(T)));
  CK(cudaMalloc(&mean, m * 4));
  CK(cudaMalloc(&rstd, m * 4));
  fill<<<1024, 256>>>(static_cast<T*>(x), m * n, 7u, 16.0f);
  fill<<<64, 256>>>(static_cast<T*>(w), n, 11u, 2.0f);
  fill<<<64, 256>>>(static_cast<T*>(b), n, 13u, 2.0f);
  CK(cudaGetLastError());
  RowArgs& a = p.a;
  a.x = x;
  a.w = op == RowOp::layer_norm || op == RowOp::rms_norm ? w : nullptr;
  a.b = op == RowOp::layer_norm ? b : nullptr;
  a.mean = op == RowOp::layer_norm ? mean : nullptr;
  a.rstd = op == RowOp::layer_norm ? rstd : nullptr;
  a.t = a.wt = a.bt = std::is_same_v<T, float> ? kq::DType::f32 : kq::DType::bf16;
  a.rows = m;
  a.n = n;
  a.inv_n = static_cast<float>(1.0 / static_cast<double>(n));
  a.eps = 1e-5f;
  a.w_vec = a.b_vec = true;
  return p;
}

template <RowOp OP>
void add_bf16(std::vector<Config>& cs, std::int64_t m, std::int64_t n) {
  using T = __nv_bfloat16;
  Problem p = make_problem<T>(OP, m, n);
  add_resident<OP, T, 128, 4>(cs, p, true, 0);
  add_resident<OP, T, 128, 4>(cs, p, false, 1);
  add_resident<OP, T, 256, 2>(cs, p, false, 0);
  add_resident<OP, T, 512, 1>(cs, p, false, 0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 32768;
  const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 31;
  std::vector<Config> cs;
  add_bf16<RowOp::softmax>(cs, m, n);
  add_bf16<RowOp::layer_norm>(cs, m, n);
  add_bf16<RowOp::rms_norm>(cs, m, n);
  {
    Problem p = make_problem<float>(RowOp::softmax, m, n);
    add_resident<RowOp::softmax, float, 256, 4>(cs, p, true, 0);
    add_resident<RowOp::softmax, float, 256, 4>(cs, p, false, 1);
    add_resident<RowOp::softmax, float, 512, 2>(cs, p, false, 0);
  }
  void *src, *dst, *flush;
  const std::int64_t copy_bytes = m * n * 2;
  CK(cudaMalloc(&src, copy_bytes * 2));
  CK(cudaMalloc(&dst, copy_bytes * 2));
  CK(cudaMalloc(&flush, 256 << 20));
  for (std::int64_t bytes : {copy_bytes, copy_bytes * 2}) {
    cs.push_back(
        {"copy " + std::to_string(bytes) + " bytes",
         [=](cudaStream_t s) { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); },
         nullptr, nullptr, 2 * bytes});
  }
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (auto& c : cs) c.launch(s);  // warm-up, and the reference outputs
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  for (int r = 0; r < rounds; ++r)
    for (auto& c : cs) {
      CK(cudaMemsetAsync(flush, r & 0xff, 256 << 20, s));
      CK(cudaEventRecord(e0, s));
      c.launch(s);
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      c.ms.push_back(ms);
    }
  unsigned long long* diff;
  CK(cudaMalloc(&diff, 8));
  for (auto& c : cs) {
    unsigned long long d = 0;
    if (c.ref != nullptr) {
      c.launch(s);
      CK(cudaMemsetAsync(diff, 0, 8, s));
      count_diff<<<1024, 256, 0, s>>>(static_cast<const unsigned char*>(c.y),
                                      static_cast<const unsigned char*>(c.ref), c.bytes / 2, diff);
      CK(cudaMemcpyAsync(&d, diff, 8, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
    }
    std::sort(c.ms.begin(), c.ms.end());
    const double med = c.ms[c.ms.size() / 2] * 1e-3;
    std::printf(
        "%-62s %8.1f us %7.0f GB/s  (%.1f-%.1f us)%s\n", c.name.c_str(), med * 1e6,
        c.bytes / med * 1e-9, c.ms.front() * 1e3, c.ms.back() * 1e3,
        c.ref == nullptr
            ? ""
            : (d == 0 ? "  same bits" : ("  DIFFERS in " + std::to_string(d) + " bytes").c_str()));
  }
  return 0;
}
