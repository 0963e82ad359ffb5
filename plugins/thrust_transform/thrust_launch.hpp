// thrust::transform over caller-owned device pointers, from host code that sees no CUDA types.
#pragma once
#include <cstdint>

#include "fused_ops.hpp"
#include "kq/status.hpp"

namespace kq::thrust_arm {

// out[i] = op(x[i], y[i]) for i < n elements of dtype t (f32; f16 and bf16 computed in float,
// rounded once) on `stream` (thrust::cuda::par_nosync.on(stream): no
// synchronisation). Thrust failures and any attempt of Thrust to allocate temporary storage
// (refused: run() may not allocate) come back as Status::error.
Status transform(fused::FusedOp op, DType t, const void* x, const void* y, void* out,
                 std::int64_t n, void* stream);

}  // namespace kq::thrust_arm
