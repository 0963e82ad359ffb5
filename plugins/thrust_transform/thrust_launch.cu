// The one Thrust translation unit (Thrust is slow to compile: keep it to this). Each op is
// thrust::transform with fused_math.cuh's functor over two input ranges of raw device pointers,
// on the caller's stream, without synchronising. In CCCL 3.0 thrust::transform dispatches to
// cub::DeviceTransform, which needs no temporary storage: the execution policy is given an
// allocator that refuses every request, so that if a Thrust version ever wants scratch memory
// the arm reports it instead of silently allocating inside run().
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/transform.h>

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>

#include "cuda_status.hpp"
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

template <class Fn>
Status run(const float* x, const float* y, float* out, std::int64_t n, cudaStream_t stream) {
  RefusingAllocator alloc;
  thrust::transform(thrust::cuda::par_nosync(alloc).on(stream), x, x + n, y, out, Fn{});
  return cuda_plugin::launched("after thrust::transform");
}

}  // namespace

Status transform(fused::FusedOp op, const float* x, const float* y, float* out, std::int64_t n,
                 void* stream) {
  try {
    auto s = static_cast<cudaStream_t>(stream);
    switch (op) {
      case fused::FusedOp::residual_relu:
        return run<fused::ResidualReluFn>(x, y, out, n, s);
      case fused::FusedOp::silu_mul:
        return run<fused::SiluMulFn>(x, y, out, n, s);
      default:
        return Status::unsupported(std::string(fused::to_string(op)) + " is not built");
    }
  } catch (const std::exception& e) {
    return Status::error(std::string("thrust::transform: ") + e.what());
  } catch (...) {
    return Status::error("thrust::transform: unknown exception");
  }
}

}  // namespace kq::thrust_arm
