// The cuda_rows plugin: cuda_softmax, cuda_log_softmax, cuda_layer_norm and cuda_rms_norm, the
// hand-written CUDA C++ kernels of rows.cu behind the arm of rows_arm.hpp.
#include <memory>

#include "kq/plugin_api.hpp"
#include "rows_arm.hpp"

namespace kq::rows {
namespace {

void make_arms(ArmList& out) {
  const Launcher l = rows_launcher();
  for (RowOp op : {RowOp::softmax, RowOp::log_softmax, RowOp::layer_norm, RowOp::rms_norm})
    out.push_back(std::make_unique<RowsArm>(op, std::string("cuda_") + to_string(op), "cuda", l));
}

}  // namespace
}  // namespace kq::rows

KQ_EXPORT_ARMS(kq::rows::make_arms)
