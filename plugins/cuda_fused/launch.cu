// The kernel instances the cuda_fused arms use (exactly variants.hpp's kKernels in float, and
// kHalfKernels in __half and __nv_bfloat16, so the PTX and cubin artifacts hold nothing else)
// and their launches.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <utility>

#include "cuda_status.hpp"
#include "kernels.cuh"
#include "launch.hpp"
#include "variants.hpp"

namespace kq::fused {
namespace {

template <class Fn, class E, KernelId K>
const void* instance() {
  if constexpr (K.path == Path::vector)
    return reinterpret_cast<const void*>(
        &vector_kernel<Fn, E, K.per_thread, K.threads, K.load, K.store>);
  else if constexpr (K.path == Path::scalar)
    return reinterpret_cast<const void*>(
        &scalar_kernel<Fn, E, K.per_thread, K.threads, K.load, K.store>);
  else
    return reinterpret_cast<const void*>(&strided_kernel<Fn, E, K.threads>);
}

// The instance of kernel K for op Op and element type E, or nullptr for an id the op never runs
// (main_kernel maps it to another) or a half type K is not built for (kHalfKernels), which is
// then not compiled at all.
template <FusedOp Op, class Fn, class E, KernelId K>
const void* instance_for_op() {
  if constexpr (main_kernel(Op, K) == K && (std::is_same_v<E, float> || has_half(K)))
    return instance<Fn, E, K>();
  else
    return nullptr;
}

template <FusedOp Op, class Fn, class E, std::size_t... I>
const void* find(const KernelId& k, std::index_sequence<I...>) {
  const void* found = nullptr;
  ((found = (!found && k == kKernels[I]) ? instance_for_op<Op, Fn, E, kKernels[I]>() : found), ...);
  return found;
}

template <class E>
const void* kernel_for(FusedOp op, const KernelId& k) {
  constexpr auto all = std::make_index_sequence<std::size(kKernels)>{};
  switch (op) {
    case FusedOp::residual_relu:
      return find<FusedOp::residual_relu, ResidualReluFn, E>(k, all);
    case FusedOp::silu_mul:
      return find<FusedOp::silu_mul, SiluMulFn, E>(k, all);
    case FusedOp::leaky_relu:
      return find<FusedOp::leaky_relu, LeakyReluFn, E>(k, all);
  }
  return nullptr;
}

const void* kernel_for(FusedOp op, DType t, const KernelId& k) {
  return with_elem(t, [&]<class E>(E*) { return kernel_for<E>(op, k); });
}

Status launch(const void* fn, int threads, void* args, std::int64_t blocks, void* stream) {
  if (!fn) return Status::error("no such kernel instance");
  if (blocks < 1 || blocks > 0x7fffffff)
    return Status::error("grid of " + std::to_string(blocks) + " blocks");
  void* params[] = {args};
  cudaError_t e = cudaLaunchKernel(fn, dim3(static_cast<unsigned>(blocks)), dim3(threads), params,
                                   0, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) return cuda_plugin::cuda_status(e, "cudaLaunchKernel");
  return cuda_plugin::launched("after the launch");
}

}  // namespace

Status resident_blocks(FusedOp op, DType t, const KernelId& k, int& blocks) {
  const void* fn = kernel_for(op, t, k);
  if (!fn) return Status::error("no such kernel instance");
  return cuda_plugin::resident_blocks(fn, k.threads, blocks);
}

Status launch_flat(FusedOp op, DType t, const KernelId& k, const FlatArgs& args,
                   std::int64_t blocks, void* stream) {
  if (k.path == Path::strided) return Status::error("launch_flat with a strided kernel");
  FlatArgs a = args;
  return launch(kernel_for(op, t, k), k.threads, &a, blocks, stream);
}

Status launch_strided(FusedOp op, DType t, const KernelId& k, const StridedArgs& args,
                      std::int64_t blocks, void* stream) {
  if (k.path != Path::strided) return Status::error("launch_strided with a flat kernel");
  StridedArgs a = args;
  return launch(kernel_for(op, t, k), k.threads, &a, blocks, stream);
}

}  // namespace kq::fused
