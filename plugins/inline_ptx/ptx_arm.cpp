// inline_ptx_residual_relu: relu(x + residual) whose global loads and stores are inline PTX with
// streaming cache hints (ptx_access.cuh), in f32, and in f16 and bf16 with the PTX half-pair
// instructions add.rn.{f16,bf16}x2 and max.NaN.{f16,bf16}x2 (ptx_half.cuh). Contiguous,
// out-of-place only: the loads use the
// read-only (.nc) path, which is wrong if the output aliases an input, so a spec admitting
// in-place or strided views is refused. Host code only; kernels in ptx_kernels.cuh.
#include <algorithm>
#include <array>
#include <exception>
#include <memory>
#include <string>

#include "fused_ops.hpp"
#include "kq/build_artifacts.hpp"
#include "kq/plugin_api.hpp"
#include "ptx_launch.hpp"
#include "views.hpp"

namespace kq::ptx {
namespace {

constexpr const char* kVersion = "1.0.0";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class PtxArm final : public GuardedArm {
 public:
  PtxArm() : GuardedArm(Device::cuda) {}

  ArmIdentity identity() const override {
    return build::identity("inline_ptx_residual_relu", "inline_ptx", Device::cuda, kVersion);
  }

  Status on_supports(const OpSpec& spec) const override {
    std::string why;
    const std::array<fused::FusedOp, 1> ops{fused::FusedOp::residual_relu};
    if (!fused::recognise(spec, ops, why)) return Status::unsupported(why);
    if (!spec.layouts.contiguous_only)
      return Status::unsupported("the spec admits strided views; this arm is contiguous only");
    if (!spec.outputs[0].may_alias.empty())
      return Status::unsupported(
          "the spec admits in-place calls; this arm's ld.global.nc loads need inputs no "
          "thread writes");
    return Status::ok();
  }

  Status on_prepare(const Problem&) override {
    if (Status s = resident_blocks(spec().dtype, true, resident_vector_); !s.is_ok()) return s;
    return resident_blocks(spec().dtype, false, resident_scalar_);
  }

  Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                void* stream) override {
    const TensorView& out = outputs[0];
    const std::int64_t n = out.numel();
    // check_contract has refused overlap (the spec admits none) and strided views; checked
    // again because .nc loads of memory being written would be silently wrong.
    if (fused::output_overlaps_inputs(inputs, out))
      return Status::unsupported("the output overlaps an input");
    if (!out.is_contiguous() || !fused::all_contiguous(inputs))
      return Status::unsupported("strided views");
    const std::array<TensorView, 3> views{inputs[0], inputs[1], out};
    const bool vector = fused::aligned16(views);
    // One pass: a block per chunk of work, so no thread loops and the grid is as wide as the
    // data (65536 blocks at 2^28 elements, ~250 waves of the 132 SMs); it beat grid-stride
    // loops over a few waves by ~5% (plugins/cuda_fused/variants.hpp).
    const auto per_vec = static_cast<std::int64_t>(16 / dtype_size(out.dtype));
    const std::int64_t chunks =
        vector ? ceil_div(n / per_vec, static_cast<std::int64_t>(kVectorsPerThread) * kThreads)
               : ceil_div(n, static_cast<std::int64_t>(kScalarsPerThread) * kThreads);
    const std::int64_t blocks = std::clamp<std::int64_t>(chunks, 1, 0x7fffffff);
    return launch(out.dtype, vector, inputs[0].data, inputs[1].data, out.data, n, blocks, stream);
  }

  std::vector<Artifact> on_artifacts() const override {
    std::vector<Artifact> a = build::cuda_artifacts();
    std::string notes =
        "arm inline_ptx_residual_relu (relu(x + residual), f32, f16 and bf16, contiguous, out of "
        "place)\n"
        "all three pointers 16-byte aligned: ptx_vector_kernel<" +
        std::to_string(kVectorsPerThread) + ", " + std::to_string(kThreads) +
        ">: ld.global.nc.L2::256B.v4.f32 and st.global.cs.v4.f32, " +
        std::to_string(kVectorsPerThread) +
        " float4 per input per thread in flight, one pass (a block per " +
        std::to_string(kVectorsPerThread * kThreads) +
        " float4); the n % 4 tail in ld.global.nc.f32 / st.global.cs.f32\n"
        "f16 and bf16: the same shapes over uint4 (8 halves: ld.global.nc.L2::256B.v4.u32, "
        "st.global.cs.v4.u32; the n % 8 tail in .u16), each pair computed by add.rn.f16x2 + "
        "max.NaN.f16x2 (bf16x2 for bf16) against +0: one correctly rounded addition (the "
        "reference rounded once), NaN kept, relu(-0) = +0 (see ptx_half.cuh)\n"
        "L1::no_allocate and L1::evict_first load hints measured ~10% slower on the H200 and "
        "are not used (see ptx_access.cuh)\n"
        "otherwise: ptx_scalar_kernel<" +
        std::to_string(kScalarsPerThread) + ", " + std::to_string(kThreads) +
        ">: the scalar PTX loads and stores, coalesced, " + std::to_string(kScalarsPerThread) +
        " per input per thread in flight, one pass\n";
    if (prepared())
      notes += "resident blocks (SMs x blocks per SM): vector " + std::to_string(resident_vector_) +
               ", scalar " + std::to_string(resident_scalar_) + "\n";
    a.push_back({"notes", "launch.txt", notes});
    return a;
  }

 private:
  int resident_vector_ = 0, resident_scalar_ = 0;
};

void make_arms(ArmList& out) { out.push_back(std::make_unique<PtxArm>()); }

}  // namespace
}  // namespace kq::ptx

KQ_EXPORT_ARMS(kq::ptx::make_arms)
