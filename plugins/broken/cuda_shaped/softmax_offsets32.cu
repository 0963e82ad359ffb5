// Flaw: softmax whose element offsets are 32-bit ints, `int i = row * N + col` wrapping past
// 2^31 elements; every other line is cuda_rows' (plugins/cuda_rows/kernels.cuh, the same
// kernels with another index policy). Right on every matrix of at most 2^31 elements; on a
// larger one the elements beyond read and write 2^32 elements before their own (out of bounds,
// another buffer, or the input). Caught by: values, input_modified, output_guard or cuda_error
// at qualification's huge case alone (full mode: M = 524161 rows of 4097, whose last row
// crosses 2^31), whichever the wrapped accesses meet first.
#include <cstdint>

#include "dispatch.cuh"

namespace kq::rows {
namespace {

struct Index32 {
  __device__ __forceinline__ static std::int64_t at(std::int64_t row, std::int64_t n,
                                                    std::int64_t col) {
    // int i = row * n + col, as two's complement wraps it (spelled out: signed overflow is UB).
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(row) *
                                         static_cast<std::uint32_t>(n) +
                                     static_cast<std::uint32_t>(col));
  }
};

}  // namespace

Launcher offsets32_launcher() {
  using D = Dispatch<Index32, RowOp::softmax>;
  return {&D::launch, &D::load};
}

}  // namespace kq::rows
