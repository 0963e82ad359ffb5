// Known-broken CUDA candidates for float32 matrix products C = A B (A (M, K), B (K, N), both
// row-major: KernelBench 2, 6, 7, 8), each a plain kernel right but for its one flaw:
//
//   broken_cuda_matmul_splitk_race  K split in kSplits parts, one block each, every part adding
//       its partial sum into C with a plain load and store (no atomics, no second pass). C's old
//       value is read before the part's loop, so parts whose blocks run at once overwrite each
//       other's sums. Caught by: values (small grids, every part resident at once), or
//       repeat_differs where a first run got lucky.
//   broken_cuda_matmul_offsets32  element offsets in 32 bits (`int i = m * K + k`), wrapping
//       past 2^31 elements. Right wherever A, B and C hold at most 2^31 elements; caught at full
//       qualification's huge point alone (A of 2^31 + elements): values, input_modified,
//       output_guard or cuda_error, whichever the wrapped reads meet first.
//
// Both live in the plugin folder's test_specs/, which kq searches only when told: no spec in
// specs/ is a matrix product (the self-test's), and the second needs the full plan.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "cuda_status.hpp"
#include "kq/build_info.hpp"
#include "kq/guarded_arm.hpp"
#include "kq/indexed_text.hpp"
#include "kq/plugin_api.hpp"

namespace kq::broken::cuda_matmul {
namespace {

// C = A B as kq's canonical text says it (kq check-spec prints it).
constexpr const char* kMatmul = R"(
  out0[i0, i1] = sum(i2, mul(in0[i0, i2], in1[i2, i1]))
  shapes: in0[d0, d1] in1[d1, d2] out0[d0, d2]
)";

constexpr int kTile = 16;
constexpr int kSplits = 8;

// A 64-bit offset, or the one a 32-bit int holds (two's complement spelled out: signed
// overflow is undefined).
template <bool Wrap>
__device__ __forceinline__ std::int64_t offset(std::int64_t row, std::int64_t ld,
                                               std::int64_t col) {
  if constexpr (Wrap)
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(row) *
                                         static_cast<std::uint32_t>(ld) +
                                     static_cast<std::uint32_t>(col));
  else
    return row * ld + col;
}

// One thread an element of C, its dot product in float32, k ascending.
template <bool Wrap>
__global__ void dot_kernel(const float* a, const float* b, float* c, std::int64_t M, std::int64_t N,
                           std::int64_t K) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  float s = 0.0f;
  for (std::int64_t k = 0; k < K; ++k) s += a[offset<Wrap>(m, K, k)] * b[offset<Wrap>(k, N, n)];
  c[offset<Wrap>(m, N, n)] = s;
}

// Part blockIdx.z of K added into C, which the call set to zero first: read early, written late.
__global__ void splitk_kernel(const float* a, const float* b, float* c, std::int64_t M,
                              std::int64_t N, std::int64_t K) {
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  const std::int64_t part = (K + kSplits - 1) / kSplits;
  const std::int64_t k0 = blockIdx.z * part, k1 = k0 + part < K ? k0 + part : K;
  const float old = c[m * N + n];
  float s = 0.0f;
  for (std::int64_t k = k0; k < k1; ++k) s += a[m * K + k] * b[k * N + n];
  c[m * N + n] = old + s;
}

enum class Flaw { splitk_race, offsets32 };

class MatmulCandidate final : public GuardedArm {
 public:
  explicit MatmulCandidate(Flaw flaw) : GuardedArm(Device::cuda), flaw_(flaw) {}

  ArmIdentity identity() const override {
    const bool race = flaw_ == Flaw::splitk_race;
    ArmIdentity id =
        build::identity(race ? "broken_cuda_matmul_splitk_race" : "broken_cuda_matmul_offsets32",
                        "broken", Device::cuda, "1");
    id.expected_rejection =
        race ? "values|repeat_differs" : "values|input_modified|output_guard|cuda_error";
    return id;
  }

 protected:
  bool computes_shaped() const override { return true; }

  Status on_supports(const OpSpec& spec) const override {
    if (!spec.program || !ix::computes(*spec.program, kMatmul))
      return Status::unsupported("computes a float32 matrix product C = A B only");
    if (spec.compute != DType::f32 || spec.tf32) return Status::unsupported("compute f32 only");
    for (const ix::TensorDecl& t : spec.program->decls.tensors)
      if (t.dtype != DType::f32) return Status::unsupported("float32 tensors only");
    if (!spec.layouts.contiguous_only) return Status::unsupported("contiguous layouts only");
    return Status::ok();
  }

  Status on_run(std::span<const TensorView> in, std::span<const TensorView> out,
                void* stream) override {
    const TensorView &a = in[0], &b = in[1], &c = out[0];
    const std::int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
    const auto s = static_cast<cudaStream_t>(stream);
    const auto* pa = static_cast<const float*>(a.data);
    const auto* pb = static_cast<const float*>(b.data);
    auto* pc = static_cast<float*>(c.data);
    const dim3 block(kTile, kTile);
    const auto tiles = [](std::int64_t x) {
      return static_cast<unsigned>((x + kTile - 1) / kTile);
    };
    if (flaw_ == Flaw::offsets32) {
      dot_kernel<true><<<dim3(tiles(N), tiles(M)), block, 0, s>>>(pa, pb, pc, M, N, K);
    } else {
      Status st = cuda_plugin::cuda_status(
          cudaMemsetAsync(pc, 0, static_cast<std::size_t>(M * N) * sizeof(float), s),
          "cudaMemsetAsync");
      if (!st.is_ok()) return st;
      splitk_kernel<<<dim3(tiles(N), tiles(M), kSplits), block, 0, s>>>(pa, pb, pc, M, N, K);
    }
    return cuda_plugin::launched("launch");
  }

 private:
  Flaw flaw_;
};

void make_arms(ArmList& out) {
  out.push_back(std::make_unique<MatmulCandidate>(Flaw::splitk_race));
  out.push_back(std::make_unique<MatmulCandidate>(Flaw::offsets32));
}

}  // namespace
}  // namespace kq::broken::cuda_matmul

KQ_EXPORT_ARMS(kq::broken::cuda_matmul::make_arms)
