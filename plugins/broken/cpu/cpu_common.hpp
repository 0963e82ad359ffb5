// Helpers for the CPU candidates: the correct scalar functions (each arm breaks one thing), and a
// row-major walk over strided views.
#pragma once
#include <array>
#include <cstdint>
#include <span>

#include "common/broken_arm.hpp"

namespace kq::broken::cpu {

// relu as the reference defines it: NaN propagates and relu(-0) = +0.
inline float relu(float s) { return s > 0.0f ? s : (s != s ? s : 0.0f); }

// select(x > 0, x, 0.01 * x) with the product in double, rounded once, as the reference does.
inline float leaky(float x) {
  return x > 0.0f ? x : static_cast<float>(0.01 * static_cast<double>(x));
}

// The base of the CPU candidates.
class CpuArm : public BrokenArm {
 public:
  CpuArm(const char* flaw, const char* expected, Takes what = Takes::residual_relu)
      : BrokenArm(Device::cpu, flaw, expected, what) {}
};

// Calls f(off) for every element of the views' common shape (that of views[0]) in row-major
// order, with off[k] the element offset of views[k]. Views must share rank and shape.
template <std::size_t K, class F>
void for_each_element(const std::array<TensorView, K>& views, F&& f) {
  const TensorView& v0 = views[0];
  const std::int64_t n = v0.numel();
  std::array<std::int64_t, kMaxRank> idx{};
  std::array<std::int64_t, K> off{};
  for (std::int64_t e = 0; e < n; ++e) {
    f(off);
    for (int d = v0.rank - 1; d >= 0; --d) {  // odometer step
      for (std::size_t k = 0; k < K; ++k) off[k] += views[k].strides[d];
      if (++idx[d] < v0.shape[d]) break;
      for (std::size_t k = 0; k < K; ++k) off[k] -= views[k].strides[d] * v0.shape[d];
      idx[d] = 0;
    }
  }
}

// leaky_relu over a strided output and input of one shape, element by element in row-major order.
inline void leaky_strided(const TensorView& out, const TensorView& x) {
  auto* o = static_cast<float*>(out.data);
  const auto* xs = static_cast<const float*>(x.data);
  for_each_element(std::array<TensorView, 2>{out, x},
                   [&](const std::array<std::int64_t, 2>& off) { o[off[0]] = leaky(xs[off[1]]); });
}

// Views of one input and one output: the same rank and shape, else an error.
inline Status same_shape(std::span<const TensorView> in, std::span<const TensorView> out) {
  for (const TensorView& v : in) {
    if (v.rank != out[0].rank) return Status::error("tensors of different ranks");
    for (int d = 0; d < v.rank; ++d)
      if (v.shape[d] != out[0].shape[d]) return Status::error("tensors of different shapes");
  }
  return Status::ok();
}

}  // namespace kq::broken::cpu
