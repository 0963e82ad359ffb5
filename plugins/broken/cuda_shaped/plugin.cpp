// kq_broken_cuda_shaped: a known-broken CUDA candidate for the row-wise shaped specs, built on
// the cuda_rows arm (plugins/cuda_rows/rows_arm.hpp) with one flaw in its kernels. It sits in
// the plugin folder's full_only/, which kq searches only when told (--plugin-dir or --plugin):
// only full qualification (its huge case) catches it, and the self-test's --quick never would.
#include <memory>

#include "kq/plugin_api.hpp"
#include "rows_arm.hpp"

namespace kq::rows {

Launcher offsets32_launcher();

namespace {

void make_arms(ArmList& out) {
  out.push_back(std::make_unique<RowsArm>(
      RowOp::softmax, "broken_cuda_softmax_offsets32", "broken", offsets32_launcher(),
      "values|input_modified|output_guard|cuda_error",
      "element offsets in 32 bits (int row * N + col), wrapping beyond 2^31 elements"));
}

}  // namespace
}  // namespace kq::rows

KQ_EXPORT_ARMS(kq::rows::make_arms)
