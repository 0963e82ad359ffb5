// The one Thrust translation unit (Thrust is slow to compile: keep it to this). Each op is
// thrust::transform with fused_math.cuh's functor over two input ranges of raw device pointers,
// on the caller's stream, without synchronising. Elements are float, __half or __nv_bfloat16:
// the functor (elem.cuh's OnElem) widens both to float, computes, rounds once to nearest even. In
// CCCL 3.0 thrust::transform dispatches to cub::DeviceTransform, which needs no temporary storage:
// the execution policy is given an allocator that refuses every request, so that if a Thrust
// version ever wants scratch memory the arm reports it instead of silently allocating inside run().
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/transform.h>

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>

#include "cuda_status.hpp"
#include "elem.cuh"
#include "fused_math.cuh"
#include "thrust_launch.hpp"

namespace kq::thrust_arm {
namespace {

// nvcc reports both members "declared but never referenced" (warning 177, silenced here):
// Thrust's transform path never instantiates a request for temporary storage. The throw stays
// as the run-time guard should a later Thrust want some.
#pragma nv_diag_suppress 177
struct RefusingAllocator {
  using value_type = char;
  char* allocate(std::ptrdiff_t bytes) {
    throw std::runtime_error("thrust asked for " + std::to_string(bytes) +
                             " bytes of temporary storage; run() allocates nothing");
  }
  void deallocate(char*, std::size_t) {}
};

template <class Fn, class E>
Status run(const void* xp, const void* yp, void* outp, std::int64_t n, cudaStream_t stream) {
  RefusingAllocator alloc;
  const auto* x = static_cast<const E*>(xp);
  thrust::transform(thrust::cuda::par_nosync(alloc).on(stream), x, x + n, static_cast<const E*>(yp),
                    static_cast<E*>(outp), fused::OnElem<Fn, E>{});
  return cuda_plugin::launched("after thrust::transform");
}

}  // namespace

Status transform(fused::FusedOp op, DType t, const void* x, const void* y, void* out,
                 std::int64_t n, void* stream) {
  try {
    auto s = static_cast<cudaStream_t>(stream);
    return fused::with_elem(t, [&]<class E>(E*) {
      switch (op) {
        case fused::FusedOp::residual_relu:
          return run<fused::ResidualReluFn, E>(x, y, out, n, s);
        case fused::FusedOp::silu_mul:
          return run<fused::SiluMulFn, E>(x, y, out, n, s);
        default:
          return Status::unsupported(std::string(fused::to_string(op)) + " is not built");
      }
    });
  } catch (const std::exception& e) {
    return Status::error(std::string("thrust::transform: ") + e.what());
  } catch (...) {
    return Status::error("thrust::transform: unknown exception");
  }
}

}  // namespace kq::thrust_arm
