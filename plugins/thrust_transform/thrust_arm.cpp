// The thrust_transform arms: thrust::transform with the op's functor on the caller's stream, for
// residual_relu (thrust_residual_relu) and silu_mul (thrust_silu_mul); any other spec is refused
// with a reason; f32, and f16 and bf16 through a functor that widens to float, computes and
// rounds once (fused_common/elem.cuh). Thrust runs over any element-aligned contiguous range (it
// peels and vectorises internally), so no alignment check is needed; strided specs are refused.
// Host code only; the Thrust call is in thrust_launch.cu.
#include <array>
#include <exception>
#include <memory>
#include <string>

#include "fused_ops.hpp"
#include "kq/build_artifacts.hpp"
#include "kq/plugin_api.hpp"
#include "thrust_launch.hpp"
#include "views.hpp"

namespace kq::thrust_arm {
namespace {

constexpr const char* kVersion = "1.0.0";

class ThrustArm final : public GuardedArm {
 public:
  explicit ThrustArm(fused::FusedOp op) : GuardedArm(Device::cuda), op_(op) {}

  ArmIdentity identity() const override {
    return build::identity(std::string("thrust_") + fused::to_string(op_), "thrust_transform",
                           Device::cuda, kVersion);
  }

  Status on_supports(const OpSpec& spec) const override {
    std::string why;
    const std::array<fused::FusedOp, 1> ops{op_};
    if (!fused::recognise(spec, ops, why)) return Status::unsupported(why);
    if (!spec.layouts.contiguous_only)
      return Status::unsupported(
          "the spec admits strided views; thrust::transform here runs "
          "over contiguous ranges only");
    return Status::ok();
  }

  Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                void* stream) override {
    const TensorView& out = outputs[0];
    if (!out.is_contiguous() || !fused::all_contiguous(inputs))
      return Status::unsupported("strided views");
    return transform(op_, out.dtype, inputs[0].data, inputs[1].data, out.data, out.numel(), stream);
  }

  std::vector<Artifact> on_artifacts() const override {
    std::vector<Artifact> a = build::cuda_artifacts();
    a.push_back(
        {"notes", "launch.txt",
         std::string("arm ") + identity().name + " (" + fused::formula(op_) +
             ", f32, f16 and bf16, contiguous)\n"
             "f16 / bf16: the functor is elem.cuh's OnElem: each element widened to float, the "
             "formula in float, the result rounded once (__float2half_rn / __float2bfloat16_rn)\n"
             "thrust::transform(thrust::cuda::par_nosync(refusing_allocator).on(stream), x, x + "
             "n, y, out, functor) over raw device pointers; 64-bit n is dispatched by Thrust.\n"
             "CCCL 3.0: thrust::transform -> cub::DeviceTransform (no temporary storage). The "
             "functor does not proclaim copyable arguments, so CUB takes its 'prefetch' "
             "algorithm (not the sm_90 bulk-copy one); launch shape and grid are CUB's tuning.\n"
             "Temporary storage: none requested; the policy's allocator throws if asked, and "
             "run() would report that as an error.\n"
             "In place (silu_mul's may_alias): cub::DeviceTransform allows the output to be "
             "exactly an input.\n"});
    return a;
  }

 private:
  fused::FusedOp op_;
};

void make_arms(ArmList& out) {
  out.push_back(std::make_unique<ThrustArm>(fused::FusedOp::residual_relu));
  out.push_back(std::make_unique<ThrustArm>(fused::FusedOp::silu_mul));
}

}  // namespace
}  // namespace kq::thrust_arm

KQ_EXPORT_ARMS(kq::thrust_arm::make_arms)
