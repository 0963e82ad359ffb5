// The cuda_fused arms: hand-written CUDA kernels for residual_relu, silu_mul and leaky_relu
// (fused_common/fused_ops.hpp recognises the spec; fused_common/fused_math.cuh has the formulas),
// one arm per (op, launch variant) of variants.hpp, in f32, and in f16 and bf16 (computed in
// float, rounded once: fused_common/elem.cuh) for the variants marked half. This file is host
// code only: it checks the contract, picks the path the views allow and launches through
// launch.hpp.
#include <algorithm>
#include <array>
#include <exception>
#include <memory>
#include <string>

#include "fused_ops.hpp"
#include "kq/build_artifacts.hpp"
#include "kq/plugin_api.hpp"
#include "launch.hpp"
#include "variants.hpp"
#include "views.hpp"

namespace kq::fused {
namespace {

constexpr const char* kVersion = "1.0.0";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Elements per 16-byte vector: 4 floats, 8 halves.
std::int64_t vector_width(DType t) { return 16 / static_cast<std::int64_t>(dtype_size(t)); }

// One pass: a block per chunk of work (variants.hpp says why), at least one (the head and tail
// need a thread even when there is no full vector); a grid beyond 2^31 - 1 blocks is capped and
// the kernels' grid-stride loop covers the rest.
std::int64_t one_pass_grid(std::int64_t chunks) {
  return std::clamp<std::int64_t>(chunks, 1, 0x7fffffff);
}

std::string describe(const KernelId& k, DType t) {
  const bool half = is_half(t);
  const std::string e = half ? std::string(to_string(t)) + ", computed in float" : "float";
  std::string s = k.path == Path::vector ? std::string("vector_kernel (") +
                                               (half ? "uint4 of 8 halves, " : "float4, ") + e + ")"
                  : k.path == Path::scalar ? "scalar_kernel (" + e + ")"
                                           : "strided_kernel (" + e + ")";
  s += ", " + std::to_string(k.per_thread) + " per input per thread in flight, " +
       std::to_string(k.threads) + "-thread blocks, loads " +
       (k.load == Load::nc   ? "ld.global.nc"
        : k.load == Load::cs ? "ld.global.cs"
                             : "ld.global") +
       ", stores " + (k.store == Store::cs ? "st.global.cs" : "st.global");
  return s;
}

class FusedArm final : public GuardedArm {
 public:
  FusedArm(FusedOp op, const Variant& v)
      : GuardedArm(Device::cuda), op_(op), variant_(v), main_(main_kernel(op, v.kernel)) {}

  ArmIdentity identity() const override {
    return build::identity(std::string("cuda_fused_") + to_string(op_) + "_" + variant_.suffix,
                           "cuda_fused", Device::cuda, kVersion);
  }

  Status on_supports(const OpSpec& spec) const override {
    std::string why;
    const std::array<FusedOp, 1> ops{op_};
    if (!recognise(spec, ops, why)) return Status::unsupported(why);
    if (is_half(spec.dtype) && !variant_.half)
      return Status::unsupported("variant " + std::string(variant_.suffix) +
                                 " is built for f32 only; the f16 and bf16 kernels are those of " +
                                 half_variant_names());
    for (int r : spec.layouts.ranks)
      if (r < 1 || r > kMaxRank)
        return Status::unsupported("rank " + std::to_string(r) + " is outside 1.." +
                                   std::to_string(kMaxRank));
    return Status::ok();
  }

  // Every kernel this arm may launch: loads their modules now, outside timed regions.
  Status on_prepare(const Problem&) override {
    const DType t = spec().dtype;
    if (Status s = resident_blocks(op_, t, main_, resident_main_); !s.is_ok()) return s;
    if (Status s = resident_blocks(op_, t, aliasing_safe(main_), resident_alias_); !s.is_ok())
      return s;
    if (Status s = resident_blocks(op_, t, kScalarFallback, resident_scalar_); !s.is_ok()) return s;
    return resident_blocks(op_, t, kStrided, resident_strided_);
  }

  Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                void* stream) override {
    const TensorView& out = outputs[0];
    if (!out.is_contiguous() || !all_contiguous(inputs)) return run_strided(inputs, out, stream);
    return run_flat(inputs, out, stream);
  }

  std::vector<Artifact> on_artifacts() const override {
    std::vector<Artifact> a = build::cuda_artifacts();
    a.push_back({"notes", "launch.txt", notes()});
    return a;
  }

 private:
  Status run_flat(std::span<const TensorView> inputs, const TensorView& out, void* stream) const {
    const std::int64_t n = out.numel();
    const DType t = out.dtype;
    FlatArgs a;
    a.in0 = inputs[0].data;
    a.in1 = inputs[input_count(op_) > 1 ? 1 : 0].data;
    a.out = out.data;
    a.n = n;

    std::array<TensorView, 3> views{};
    std::size_t count = 0;
    for (const TensorView& v : inputs) views[count++] = v;
    views[count++] = out;
    const std::int64_t head = common_head(std::span<const TensorView>(views.data(), count), n);
    const bool aliased = output_overlaps_inputs(inputs, out);

    KernelId k = main_;
    if (k.path == Path::vector && head < 0) k = kScalarFallback;  // no common 16-byte path
    if (aliased) k = aliasing_safe(k);
    const std::int64_t per_block = static_cast<std::int64_t>(k.per_thread) * k.threads;
    std::int64_t chunks;
    if (k.path == Path::vector) {
      a.head = head;
      chunks = ceil_div((n - head) / vector_width(t), per_block);
    } else {
      chunks = ceil_div(n, per_block);
    }
    return launch_flat(op_, t, k, a, one_pass_grid(chunks), stream);
  }

  Status run_strided(std::span<const TensorView> inputs, const TensorView& out,
                     void* stream) const {
    // Two indices writing one element would race; kq's contract does not produce such outputs,
    // but a strided spec could admit one.
    if (overlaps_itself(out)) return Status::unsupported("the output view overlaps itself");
    StridedArgs a;
    const TensorView& in1 = inputs[input_count(op_) > 1 ? 1 : 0];
    a.in0 = inputs[0].data;
    a.in1 = in1.data;
    a.out = out.data;
    a.n = out.numel();
    a.rank = out.rank;
    for (int d = 0; d < out.rank; ++d) {
      a.shape[d] = out.shape[d];
      a.stride0[d] = inputs[0].strides[d];
      a.stride1[d] = in1.strides[d];
      a.stride_out[d] = out.strides[d];
    }
    // At most 4 waves of resident blocks, each thread looping: the index arithmetic, not DRAM,
    // bounds this path.
    const std::int64_t blocks = std::min<std::int64_t>(ceil_div(a.n, kStrided.threads),
                                                       4LL * std::max(resident_strided_, 1));
    return launch_strided(op_, out.dtype, kStrided, a, one_pass_grid(blocks), stream);
  }

  std::string notes() const {
    const KernelId& k = main_;
    const DType t = prepared() ? spec().dtype : DType::f32;
    const std::int64_t w = vector_width(t);
    const std::string unit =
        k.path == Path::vector ? (w == 4 ? " float4" : " uint4 (8 halves)") : " elements";
    std::string s = "arm " + identity().name + " (" + formula(op_) + ", " +
                    (variant_.half ? "f32, f16 and bf16" : "f32") + "; described for " +
                    std::string(to_string(t)) + ")\n";
    s += "main path (contiguous views, all pointers at one offset from 16 bytes):\n  " +
         describe(k, t) + "\n  grid: one pass, a block per " +
         std::to_string(k.per_thread * k.threads) + unit + " (2^28 elements: " +
         std::to_string((k.path == Path::vector ? (1LL << 28) / w : (1LL << 28)) /
                        (static_cast<long long>(k.per_thread) * k.threads)) +
         " blocks)\n  why: " + variant_.why + "\n";
    if (k.path == Path::vector)
      s += "  a head of 0-" + std::to_string(w - 1) +
           " elements (to the 16-byte boundary) and the (n - head) % " + std::to_string(w) +
           " tail are done by the first threads, one element each\n";
    if (is_half(t))
      s += "  half: each element widened exactly to float, the formula in float, the result "
           "rounded once to nearest even (__floats2half2_rn / __floats2bfloat162_rn, "
           "__float2half_rn / __float2bfloat16_rn)\n";
    s += "output overlapping an input (in place): " + describe(aliasing_safe(k), t) + "\n";
    s += "pointers at different offsets from 16 bytes: " + describe(kScalarFallback, t) +
         ", one pass\n";
    s += "strided views: " + describe(kStrided, t) + ", at most 4 waves, grid-stride\n";
    if (prepared())
      s += "resident blocks on the device (SMs x blocks per SM): main " +
           std::to_string(resident_main_) + ", aliasing-safe " + std::to_string(resident_alias_) +
           ", scalar fallback " + std::to_string(resident_scalar_) + ", strided " +
           std::to_string(resident_strided_) + "\n";
    s += "measurements and the reasons for these shapes: plugins/cuda_fused/variants.hpp\n";
    s += "semantics: plugins/fused_common/fused_math.cuh (exact roundings, NaN and -0 rules), "
         "plugins/fused_common/elem.cuh (half loads and the one rounding)\n";
    return s;
  }

  FusedOp op_;
  Variant variant_;
  KernelId main_;  // variant_.kernel as this op runs it (main_kernel)
  int resident_main_ = 0, resident_alias_ = 0, resident_scalar_ = 0, resident_strided_ = 0;
};

void make_arms(ArmList& out) {
  for (FusedOp op : {FusedOp::residual_relu, FusedOp::silu_mul, FusedOp::leaky_relu})
    for (const Variant& v : kVariants) out.push_back(std::make_unique<FusedArm>(op, v));
}

}  // namespace
}  // namespace kq::fused

KQ_EXPORT_ARMS(kq::fused::make_arms)
