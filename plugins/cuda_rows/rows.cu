// Every cuda_rows kernel, in one translation unit (nvcc's cost is per file): the four ops in
// f32, f16 and bf16, each in the resident shapes of launch.hpp and the looped kernel, with
// 64-bit element offsets.
#include "dispatch.cuh"

namespace kq::rows {

Launcher rows_launcher() {
  using D =
      Dispatch<Index64, RowOp::softmax, RowOp::log_softmax, RowOp::layer_norm, RowOp::rms_norm>;
  return {&D::launch, &D::load};
}

}  // namespace kq::rows
