// Flaw: a convolution that flips its kernel, y[i] = sum x[i + k] w[K - 1 - k], where the spec
// (and PyTorch's conv1d) computes the cross-correlation y[i] = sum x[i + k] w[k]: the textbook
// convolution, right wherever the kernel is symmetric. Caught by: values (any case whose weights
// are not symmetric in k).
#include <memory>

#include "shaped_arm.hpp"

namespace kq::broken::cpu {
namespace {

// KernelBench 67: conv1d, kernel 3, stride 1, no padding, no bias.
constexpr const char* kConv1d = R"(
  out0[i0, i1, i2] = sum((i3, i4), mul(in0[i0, i3, add(i2, i4)], in1[i1, i3, i4]))
  shapes: in0[d0, d1, d2] in1[d3, d1, 3] out0[d0, d3, d4]
  derived: d4 = ( d2 + 2 * 0 - 1 * ( 3 - 1 ) - 1 ) / 1 + 1
)";

class ConvFlippedKernel final : public ShapedArm {
 public:
  ConvFlippedKernel()
      : ShapedArm("conv_flipped_kernel", "values", "a float32 conv1d of kernel 3", kConv1d,
                  {{DType::f32, DType::f32, DType::f32}}) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    const TensorView &x = in[0], &w = in[1], &y = out[0];
    const std::int64_t B = x.shape[0], C = x.shape[1], O = w.shape[0], LO = y.shape[2];
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t o = 0; o < O; ++o)
        for (std::int64_t i = 0; i < LO; ++i) {
          double s = 0;
          for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t k = 0; k < 3; ++k)
              s += get(x, {b, c, i + k}) * get(w, {o, c, 2 - k});  // the flaw: w flipped
          put(y, {b, o, i}, s);
        }
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_conv_flipped_kernel() {
  return std::make_unique<ConvFlippedKernel>();
}

}  // namespace kq::broken::cpu
