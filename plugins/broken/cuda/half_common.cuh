// What the half-precision CUDA candidates share: contiguous f16 / bf16 views of relu(x +
// residual), an elementwise map over any element type, and the correct element (widened to
// float, relu of the float sum, rounded once: fused_common/elem.cuh's OnElem) that each of them
// gets right wherever its flaw does not apply.
#pragma once
#include <type_traits>

#include "cuda_common.cuh"
#include "elem.cuh"

namespace kq::broken::cuda {

struct DenseHalf {
  const void* x;
  const void* r;
  void* out;
  std::int64_t n;
  DType dtype;  // f16 or bf16 (Takes::residual_relu_half)
};

inline DenseHalf dense_half(std::span<const TensorView> in, std::span<const TensorView> out) {
  return {in[0].data, in[1].data, out[0].data, out[0].numel(), out[0].dtype};
}

// out[i] = f(x[i], r[i]) over n elements of storage type S.
template <class S, class F>
__global__ void map2_elem(const S* x, const S* r, S* out, std::int64_t n, F f) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = f(x[i], r[i]);
}

// map2_elem over d's elements, E = __half or __nv_bfloat16 by its dtype; f has a templated
// operator()<E>(E, E) -> E.
template <class F>
Status launch_half(const DenseHalf& d, void* stream, F f, const char* what) {
  auto go = [&]<class E>(E*) {
    map2_elem<<<blocks_for(d.n), kThreads, 0, stream_of(stream)>>>(
        static_cast<const E*>(d.x), static_cast<const E*>(d.r), static_cast<E*>(d.out), d.n, f);
  };
  if (d.dtype == DType::f16)
    go(static_cast<__half*>(nullptr));
  else
    go(static_cast<__nv_bfloat16*>(nullptr));
  return launched(what);
}

// relu(x + residual) as the contract says, on any half type.
struct HalfRelu {
  template <class E>
  __device__ E operator()(E x, E r) const {
    return fused::OnElem<Relu, E>{}(x, r);
  }
};

}  // namespace kq::broken::cuda
