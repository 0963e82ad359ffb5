// Helpers for the CUDA candidates: the correct device functions (each arm breaks one thing),
// launch shapes with 64-bit grid-stride loops, the launch check, and a strided-view kernel.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/broken_arm.hpp"
#include "cuda_status.hpp"

namespace kq::broken::cuda {

inline constexpr int kThreads = 256;

// The base of the CUDA candidates.
class CudaArm : public BrokenArm {
 public:
  CudaArm(const char* flaw, const char* expected, Takes what = Takes::residual_relu)
      : BrokenArm(Device::cuda, flaw, expected, what) {}
};

// relu as the reference defines it: NaN propagates and relu(-0) = +0.
__device__ __forceinline__ float relu(float s) { return s > 0.0f ? s : (s != s ? s : 0.0f); }

// select(x > 0, x, 0.01 * x) with the product in double, rounded once, as the reference does.
__device__ __forceinline__ float leaky(float x) {
  return x > 0.0f ? x : __double2float_rn(0.01 * static_cast<double>(x));
}

__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// Enough blocks for one element per thread, capped (the loops are grid-stride).
inline unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 16));
}

inline cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }

// The launch's status, and a runtime call's, as the arm returns them.
using cuda_plugin::launched;
inline Status checked(cudaError_t e, const char* what) { return cuda_plugin::cuda_status(e, what); }

// out[i] = f(x[i], r[i]) over contiguous views.
template <class F>
__global__ void map2(const float* __restrict__ x, const float* __restrict__ r,
                     float* __restrict__ out, std::int64_t n, F f) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = f(x[i], r[i]);
}

struct Relu {
  __device__ float operator()(float x, float r) const { return relu(x + r); }
};

// relu(x + r) with the addition flushing subnormals to zero (add.rn.ftz.f32, what -ftz=true or
// --use_fast_math compile every f32 addition to): subnormal inputs read as zero and subnormal
// sums flush. The flaw of flush_to_zero, and of subnormal_flush_large on big tensors.
struct ReluOfFtzSum {
  __device__ float operator()(float x, float r) const {
    float s;
    asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(s) : "f"(x), "f"(r));
    return relu(s);
  }
};

// The base of the candidates whose flaw is working on a stream of their own instead of the
// caller's: a non-blocking stream, created once (in prepare()) and destroyed with the arm, which
// compute_on() gets where compute() got the caller's.
class OwnStreamArm : public CudaArm {
 public:
  using CudaArm::CudaArm;
  OwnStreamArm(const OwnStreamArm&) = delete;
  OwnStreamArm& operator=(const OwnStreamArm&) = delete;
  ~OwnStreamArm() override {
    if (own_) cudaStreamDestroy(own_);  // errors here have nobody to go to
  }

 protected:
  Status on_prepare(const Problem&) override {
    if (own_) return Status::ok();
    return checked(cudaStreamCreateWithFlags(&own_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void*) final {  // the flaw: the caller's stream is not used
    return compute_on(in, out, own_);
  }
  virtual Status compute_on(std::span<const TensorView> in, std::span<const TensorView> out,
                            cudaStream_t own) = 0;

 private:
  cudaStream_t own_ = nullptr;
};

template <class F>
Status launch_map2(const Dense2& d, void* stream, F f, const char* what) {
  map2<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(d.x, d.r, d.out, d.n, f);
  return launched(what);
}

// relu(x + residual) in 16-byte vectors over the first n / 4 * 4 elements, then the tail. It
// assumes every pointer is 16-byte aligned: callers check that, or (the broken one) do not.
__global__ void relu_sum_vec4(const float* __restrict__ x, const float* __restrict__ r,
                              float* __restrict__ out, std::int64_t n);

// The layout of up to three views of one shape, for the strided kernels.
struct Strided {
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t stride[3][kMaxRank] = {};  // [view][dim], in elements
};

inline Strided strided(const TensorView* views, int count) {
  Strided s;
  s.rank = views[0].rank;
  for (int d = 0; d < s.rank; ++d) {
    s.shape[d] = views[0].shape[d];
    for (int k = 0; k < count; ++k) s.stride[k][d] = views[k].strides[d];
  }
  return s;
}

// The element offsets of logical (row-major) index i in each of K views.
template <int K>
__device__ __forceinline__ void offsets(const Strided& s, std::int64_t i, std::int64_t (&off)[K]) {
  for (int k = 0; k < K; ++k) off[k] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const std::int64_t c = i % s.shape[d];
    i /= s.shape[d];
    for (int k = 0; k < K; ++k) off[k] += c * s.stride[k][d];
  }
}

// leaky_relu over a strided output (view 0) and input (view 1).
__global__ void leaky_strided(Strided s, const float* x, float* out, std::int64_t n);

// relu(x + residual) over a strided output (view 0) and inputs (views 1, 2).
__global__ void relu_sum_strided(Strided s, const float* x, const float* r, float* out,
                                 std::int64_t n);

}  // namespace kq::broken::cuda
