// From (op, element type, KernelChoice) to the compiled kernel, and its launch on the caller's
// stream. A template over the element-index policy and the ops it instantiates, so that the real
// plugin (rows.cu: every op, 64-bit offsets) and a known-broken candidate (softmax alone) each
// compile only the kernels they launch.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda_status.hpp"
#include "kernels.cuh"
#include "launch.hpp"

namespace kq::rows {

using KernelFn = void (*)(RowArgs);

template <RowOp OP, class T, class Ix>
KernelFn kernel_of(const KernelChoice& k) {
  static_assert(kResident.size() == 6, "one case per resident shape");
  switch (k.resident) {
    case 0:
      return resident_kernel<OP, T, kResident[0].threads, kResident[0].vectors, Ix>;
    case 1:
      return resident_kernel<OP, T, kResident[1].threads, kResident[1].vectors, Ix>;
    case 2:
      return resident_kernel<OP, T, kResident[2].threads, kResident[2].vectors, Ix>;
    case 3:
      return resident_kernel<OP, T, kResident[3].threads, kResident[3].vectors, Ix>;
    case 4:
      return resident_kernel<OP, T, kResident[4].threads, kResident[4].vectors, Ix>;
    case 5:
      return resident_kernel<OP, T, kResident[5].threads, kResident[5].vectors, Ix>;
    default:
      return k.vec ? looped_kernel<OP, T, kLoopThreads, true, Ix>
                   : looped_kernel<OP, T, kLoopThreads, false, Ix>;
  }
}

// The kernel of `op` (one of OPS) for element type t, or nullptr.
template <class Ix, RowOp... OPS>
KernelFn find_kernel(RowOp op, DType t, const KernelChoice& k) {
  KernelFn fn = nullptr;
  auto by_type = [&]<RowOp OP>() {
    switch (t) {
      case DType::f32:
        return kernel_of<OP, float, Ix>(k);
      case DType::f16:
        return kernel_of<OP, __half, Ix>(k);
      case DType::bf16:
        return kernel_of<OP, __nv_bfloat16, Ix>(k);
      default:
        return KernelFn{nullptr};
    }
  };
  ((op == OPS ? (fn = by_type.template operator()<OPS>(), true) : false) || ...);
  return fn;
}

template <class Ix, RowOp... OPS>
struct Dispatch {
  static Status launch(RowOp op, const RowArgs& a, const KernelChoice& k, void* stream) {
    const KernelFn fn = find_kernel<Ix, OPS...>(op, a.t, k);
    if (fn == nullptr)
      return Status::error(std::string("no ") + to_string(op) + " kernel for " +
                           std::string(kq::to_string(a.t)));
    if (a.rows <= 0) return Status::ok();
    // A block per row; rows beyond the grid's limit are taken by the kernels' row loop.
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>(a.rows, 0x7fffffff));
    fn<<<grid, static_cast<unsigned>(k.threads), 0, static_cast<cudaStream_t>(stream)>>>(a);
    return cuda_plugin::launched(to_string(op));
  }

  static Status load(RowOp op, DType t, const KernelChoice& k) {
    const KernelFn fn = find_kernel<Ix, OPS...>(op, t, k);
    if (fn == nullptr)
      return Status::error(std::string("no ") + to_string(op) + " kernel for " +
                           std::string(kq::to_string(t)));
    cudaFuncAttributes attr{};
    return cuda_plugin::cuda_status(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(fn)),
                                    "cudaFuncGetAttributes");
  }
};

}  // namespace kq::rows
