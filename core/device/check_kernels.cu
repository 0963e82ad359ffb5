#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "device/check_kernels.hpp"
#include "device/cuda_check.hpp"

namespace kq::devcheck {
namespace {

constexpr int kThreads = 256;
// The scans loop over their range (grid-stride): 16 blocks per SM of an H200 (132 SMs) keep
// any current GPU busy, and each thread publishes its findings with one atomic at most.
constexpr long long kMaxBlocks = 132 * 16;
constexpr unsigned long long kNone = ~0ull;

struct Result {
  unsigned long long count, first;
};

// One pass: each thread counts its failures and keeps its lowest index, then adds them to the
// result with one atomic each (none for a thread that found nothing, the usual case).
__device__ __forceinline__ void publish(Result* r, unsigned long long count,
                                        unsigned long long first) {
  if (count == 0) return;
  atomicAdd(&r->count, count);
  atomicMin(&r->first, first);
}

// A half, bf16, f32 or f64 bit pattern as a double (exact for all four).
__device__ __forceinline__ double to_double(DType t, unsigned long long bits) {
  switch (t) {
    case DType::f16: {
      const unsigned h = static_cast<unsigned>(bits) & 0xffffu;
      const unsigned sign = (h >> 15) << 31, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
      float f;
      if (exp == 0x1fu) {
        f = __int_as_float(static_cast<int>(sign | 0x7f800000u | (man << 13)));
      } else if (exp == 0) {
        f = static_cast<float>(man) * 0x1p-24f;  // subnormal (or zero): exact
        if (sign) f = -f;
      } else {
        f = __int_as_float(static_cast<int>(sign | ((exp + 112u) << 23) | (man << 13)));
      }
      return static_cast<double>(f);
    }
    case DType::bf16:
      return static_cast<double>(__int_as_float(static_cast<int>((bits & 0xffffu) << 16)));
    case DType::f32:
      return static_cast<double>(__int_as_float(static_cast<int>(bits & 0xffffffffu)));
    default:
      return __longlong_as_double(static_cast<long long>(bits));
  }
}

// Adjacent values are adjacent integers; -0 and +0 coincide (qualify/compare.cpp's ordered).
__device__ __forceinline__ long long ordered(DType t, unsigned long long bits) {
  const int width = t == DType::f64 ? 64 : t == DType::f32 ? 32 : 16;
  const unsigned long long sign = 1ull << (width - 1);
  const long long mag = static_cast<long long>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

struct Rule {
  CompareRule::Kind kind;
  long long max_ulp;
  double atol, rtol;
};

// element_matches on the device. The tolerance's arithmetic is pinned to single roundings
// (_rn), as the host computes it: no contraction into a fused multiply-add.
__device__ __forceinline__ bool matches(const Rule& r, DType t, unsigned long long w,
                                        unsigned long long g) {
  if (w == g) return true;
  const double want = to_double(t, w), got = to_double(t, g);
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  switch (r.kind) {
    case CompareRule::Kind::bitwise:
      return false;
    case CompareRule::Kind::ulp: {
      if (isinf(want) || isinf(got)) return want == got;
      long long d = ordered(t, w) - ordered(t, g);
      if (d < 0) d = -d;
      return d <= r.max_ulp;
    }
    case CompareRule::Kind::tolerance:
      if (isinf(want) || isinf(got)) return want == got;
      return fabs(__dsub_rn(got, want)) <= __dadd_rn(r.atol, __dmul_rn(r.rtol, fabs(want)));
  }
  return false;
}

// qualify/compare.cpp's ulp_at: the gap from a finite value's magnitude to the next value away
// from zero (to the one below, at the largest finite).
__device__ __forceinline__ double ulp_at(DType t, unsigned long long bits) {
  const int width = t == DType::f64 ? 64 : t == DType::f32 ? 32 : 16;
  const unsigned long long mag = bits & ((1ull << (width - 1)) - 1);
  const double a = to_double(t, mag), up = to_double(t, mag + 1);
  return isfinite(up) ? __dsub_rn(up, a) : __dsub_rn(a, to_double(t, mag - 1));
}

// element_matches under the accumulation bound, with the host's single roundings.
__device__ __forceinline__ bool matches_bound(const BoundRule& r, DType t, double e,
                                              unsigned long long w, unsigned long long g) {
  if (w == g) return true;
  const double want = to_double(t, w), got = to_double(t, g);
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return want == got;
  if (isnan(e)) return true;  // a bound that broke down bounds nothing
  return fabs(__dsub_rn(got, want)) <=
         __dadd_rn(__dmul_rn(r.scale, e), __dmul_rn(r.ulps, ulp_at(t, w)));
}

template <typename Bits>
__device__ __forceinline__ unsigned long long load(const void* p, long long i) {
  return static_cast<unsigned long long>(static_cast<const Bits*>(p)[i]);
}

template <typename Bits>
__global__ void compare_kernel(const void* got, const void* want, long long n, DType t, Rule r,
                               Result* out) {
  unsigned long long count = 0, first = kNone;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    if (!matches(r, t, load<Bits>(want, i), load<Bits>(got, i))) {
      if (first == kNone) first = static_cast<unsigned long long>(i);
      ++count;
    }
  }
  publish(out, count, first);
}

template <typename Bits>
__global__ void bounded_kernel(const void* got, const void* want, const double* bound, long long n,
                               DType t, BoundRule r, Result* out) {
  unsigned long long count = 0, first = kNone;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    if (!matches_bound(r, t, bound[i], load<Bits>(want, i), load<Bits>(got, i))) {
      if (first == kNone) first = static_cast<unsigned long long>(i);
      ++count;
    }
  }
  publish(out, count, first);
}

template <typename Bits>
__global__ void differ_kernel(const void* a, const void* b, long long n, DType t, Result* out) {
  unsigned long long count = 0, first = kNone;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned long long x = load<Bits>(a, i), y = load<Bits>(b, i);
    if (x != y && !(isnan(to_double(t, x)) && isnan(to_double(t, y)))) {
      if (first == kNone) first = static_cast<unsigned long long>(i);
      ++count;
    }
  }
  publish(out, count, first);
}

// Bytes, read 16 at a time where both pointers allow it.
__global__ void bytes_kernel(const unsigned char* a, const unsigned char* b, long long n,
                             Result* out) {
  unsigned long long count = 0, first = kNone;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const bool wide = (reinterpret_cast<unsigned long long>(a) % 16) == 0 &&
                    (reinterpret_cast<unsigned long long>(b) % 16) == 0;
  long long done = 0;
  if (wide) {
    const long long words = n / 16;
    const uint4* wa = reinterpret_cast<const uint4*>(a);
    const uint4* wb = reinterpret_cast<const uint4*>(b);
    for (long long k = tid; k < words; k += stride) {
      const uint4 x = wa[k], y = wb[k];
      if (x.x == y.x && x.y == y.y && x.z == y.z && x.w == y.w) continue;
      for (long long j = k * 16; j < k * 16 + 16; ++j) {
        if (a[j] == b[j]) continue;
        if (first == kNone) first = static_cast<unsigned long long>(j);
        ++count;
      }
    }
    done = words * 16;
  }
  for (long long j = done + tid; j < n; j += stride) {
    if (a[j] == b[j]) continue;
    if (first == kNone || static_cast<unsigned long long>(j) < first)
      first = static_cast<unsigned long long>(j);
    ++count;
  }
  publish(out, count, first);
}

// The result the scans of this host thread publish into on `device`: allocated at the first
// scan and kept (16 bytes a device), so that a later scan needs no device memory where a large
// size's buffers have taken all of it. A thread's scans are synchronous: one result serves all.
Result* thread_result(int device) {
  thread_local std::map<int, Result*> results;
  Result*& r = results[device];
  if (r == nullptr)
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&r), sizeof(Result)),
               "cudaMalloc for the device checks' result");
  return r;
}

// Runs one scan on `stream` into the thread's result and brings the result back.
template <typename Launch>
Scan scan(void* stream, long long n, Launch&& launch) {
  Scan s;
  if (n <= 0) return s;
  auto st = static_cast<cudaStream_t>(stream);
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice for a device check");
  Result* r = thread_result(device);
  const Result init{0, kNone};
  Result host{};
  cuda_check(cudaMemcpyAsync(r, &init, sizeof init, cudaMemcpyHostToDevice, st),
             "a device check's result");
  const long long blocks = std::min<long long>((n + kThreads - 1) / kThreads, kMaxBlocks);
  launch(static_cast<unsigned>(blocks), st, r);
  cuda_check(cudaGetLastError(), "a device check's kernel launch");
  cuda_check(cudaMemcpyAsync(&host, r, sizeof host, cudaMemcpyDeviceToHost, st),
             "a device check's result");
  cuda_check(cudaStreamSynchronize(st), "a device check");
  s.count = host.count;
  s.first = host.first == kNone ? -1 : static_cast<std::int64_t>(host.first);
  return s;
}

template <template <typename> class Kernel, typename... Args>
void by_width(DType t, unsigned blocks, cudaStream_t st, Args... args) {
  switch (dtype_size(t)) {
    case 2:
      Kernel<unsigned short>::launch(blocks, st, args...);
      return;
    case 4:
      Kernel<unsigned>::launch(blocks, st, args...);
      return;
    default:
      Kernel<unsigned long long>::launch(blocks, st, args...);
  }
}

template <typename Bits>
struct CompareLaunch {
  static void launch(unsigned blocks, cudaStream_t st, const void* got, const void* want,
                     long long n, DType t, Rule r, Result* out) {
    compare_kernel<Bits><<<blocks, kThreads, 0, st>>>(got, want, n, t, r, out);
  }
};

template <typename Bits>
struct BoundedLaunch {
  static void launch(unsigned blocks, cudaStream_t st, const void* got, const void* want,
                     const double* bound, long long n, DType t, BoundRule r, Result* out) {
    bounded_kernel<Bits><<<blocks, kThreads, 0, st>>>(got, want, bound, n, t, r, out);
  }
};

template <typename Bits>
struct DifferLaunch {
  static void launch(unsigned blocks, cudaStream_t st, const void* a, const void* b, long long n,
                     DType t, Result* out) {
    differ_kernel<Bits><<<blocks, kThreads, 0, st>>>(a, b, n, t, out);
  }
};

}  // namespace

Scan compare_elements(const void* got, const void* want, std::int64_t n, DType dtype,
                      const CompareRule& rule, void* stream) {
  const Rule r{rule.kind, static_cast<long long>(rule.max_ulp), rule.atol, rule.rtol};
  return scan(stream, n, [&](unsigned blocks, cudaStream_t st, Result* out) {
    by_width<CompareLaunch>(dtype, blocks, st, got, want, static_cast<long long>(n), dtype, r, out);
  });
}

Scan compare_bounded(const void* got, const void* want, const double* bound, std::int64_t n,
                     DType dtype, const BoundRule& rule, void* stream) {
  return scan(stream, n, [&](unsigned blocks, cudaStream_t st, Result* out) {
    by_width<BoundedLaunch>(dtype, blocks, st, got, want, bound, static_cast<long long>(n), dtype,
                            rule, out);
  });
}

Scan differing_elements(const void* a, const void* b, std::int64_t n, DType dtype, void* stream) {
  return scan(stream, n, [&](unsigned blocks, cudaStream_t st, Result* out) {
    by_width<DifferLaunch>(dtype, blocks, st, a, b, static_cast<long long>(n), dtype, out);
  });
}

Scan differing_bytes(const void* a, const void* b, std::size_t n, void* stream) {
  return scan(stream, static_cast<long long>(n),
              [&](unsigned blocks, cudaStream_t st, Result* out) {
                bytes_kernel<<<blocks, kThreads, 0, st>>>(static_cast<const unsigned char*>(a),
                                                          static_cast<const unsigned char*>(b),
                                                          static_cast<long long>(n), out);
              });
}

}  // namespace kq::devcheck
