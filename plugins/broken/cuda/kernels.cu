// The kernels several CUDA candidates share (declared in cuda_common.cuh).
#include "cuda_common.cuh"

namespace kq::broken::cuda {

__global__ void relu_sum_vec4(const float* __restrict__ x, const float* __restrict__ r,
                              float* __restrict__ out, std::int64_t n) {
  const std::int64_t n4 = n / 4;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  const auto* r4 = reinterpret_cast<const float4*>(r);
  auto* o4 = reinterpret_cast<float4*>(out);
  for (std::int64_t i = global_thread(); i < n4; i += grid_threads()) {
    const float4 a = x4[i], b = r4[i];
    o4[i] = make_float4(relu(a.x + b.x), relu(a.y + b.y), relu(a.z + b.z), relu(a.w + b.w));
  }
  for (std::int64_t i = n4 * 4 + global_thread(); i < n; i += grid_threads())
    out[i] = relu(x[i] + r[i]);
}

__global__ void leaky_strided(Strided s, const float* x, float* out, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    std::int64_t off[2];
    offsets<2>(s, i, off);
    out[off[0]] = leaky(x[off[1]]);
  }
}

__global__ void relu_sum_strided(Strided s, const float* x, const float* r, float* out,
                                 std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    std::int64_t off[3];
    offsets<3>(s, i, off);
    out[off[0]] = relu(x[off[1]] + r[off[2]]);
  }
}

}  // namespace kq::broken::cuda
