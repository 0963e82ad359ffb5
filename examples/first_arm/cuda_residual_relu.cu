// A CUDA arm in one file (CMakeLists.txt beside it), built against an installed kq, DEST:
//   cmake -S examples/first_arm -B first -DCMAKE_PREFIX_PATH=DEST && cmake --build first
//   DEST/bin/kq run specs/residual_relu.yaml --plugin-dir first/plugins --arms cuda_residual_relu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "kq/expr_match.hpp"
#include "kq/plugin_api.hpp"

namespace {

// relu(x + residual) over n floats. Grid-stride with 64-bit indices: any n, beyond 2^31 elements
// too. relu(-0) is +0 and NaN stays NaN, as kq's reference says: s > 0 is false for both, so the
// NaN test keeps NaN.
__global__ void residual_relu(const float* x, const float* r, float* out, std::int64_t n) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float s = x[i] + r[i];
    out[i] = (s > 0.0f || s != s) ? s : 0.0f;
  }
}

kq::Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return kq::Status::ok();
  return kq::Status::error(std::string(what) + ": " + cudaGetErrorString(e));
}

// GuardedArm checks the spec and the contract (contiguous, aligned, ranks, aliasing) before
// on_run sees a view, and turns any exception into a status.
class CudaResidualRelu : public kq::GuardedArm {
 public:
  CudaResidualRelu() : GuardedArm(kq::Device::cuda) {}

  kq::ArmIdentity identity() const override {
    return kq::build::identity("cuda_residual_relu", "first_arm", kq::Device::cuda, "1");
  }

 protected:
  kq::Status on_supports(const kq::OpSpec& spec) const override {
    // The spec's expression tree, whatever its text or input names: relu(input 0 + input 1).
    static const kq::Pattern formula =
        kq::node(kq::Op::relu, {kq::node(kq::Op::add, {kq::in(0), kq::in(1)})});
    if (!kq::matches(spec, formula)) return kq::Status::unsupported("relu(x + residual) only");
    if (spec.dtype != kq::DType::f32) return kq::Status::unsupported("f32 only");
    if (!spec.layouts.contiguous_only) return kq::Status::unsupported("contiguous views only");
    return kq::Status::ok();
  }

  kq::Status on_run(std::span<const kq::TensorView> in, std::span<const kq::TensorView> out,
                    void* stream) override {
    const std::int64_t n = out[0].numel();
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 1 << 20));
    residual_relu<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data),
        static_cast<float*>(out[0].data), n);
    return cuda_status(cudaGetLastError(), "residual_relu launch");
  }
};

void make_arms(kq::ArmList& out) { out.push_back(std::make_unique<CudaResidualRelu>()); }

}  // namespace

KQ_EXPORT_ARMS(make_arms)
