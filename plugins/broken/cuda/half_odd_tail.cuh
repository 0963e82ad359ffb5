// Flaw: a half2 kernel that works in pairs (one 32-bit __half2 / __nv_bfloat162 word of each
// tensor per thread) and has no tail: for an odd count the last element is never written. It
// does check that every pointer is 4-byte aligned for the pair loads, and takes a correct
// scalar path otherwise (odd-element offsets), so the flaw shows on aligned odd sizes only.
// Caught by: values (size/1, size/9, size/33...: the poison stays in the last element).
#include <memory>

#include "half_common.cuh"

namespace kq::broken::cuda {
namespace half_odd_tail {

template <class E>
__global__ void pairs(const unsigned* x, const unsigned* r, unsigned* out, std::int64_t n) {
  const std::int64_t n2 = n / 2;  // the flaw: n % 2 is forgotten
  for (std::int64_t i = global_thread(); i < n2; i += grid_threads())
    out[i] = fused::Elem<E>::pair(Relu{}, x[i], r[i]);
}

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("half_odd_tail", "values", Takes::residual_relu_half) {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const DenseHalf d = dense_half(in, out);
    for (const void* p : {d.x, static_cast<const void*>(d.r), static_cast<const void*>(d.out)})
      if (reinterpret_cast<std::uintptr_t>(p) % 4 != 0)
        return launch_half(d, stream, HalfRelu{}, "half_odd_tail (scalar)");
    const auto* x = static_cast<const unsigned*>(d.x);
    const auto* r = static_cast<const unsigned*>(d.r);
    auto* o = static_cast<unsigned*>(d.out);
    const unsigned blocks = blocks_for(d.n / 2);
    if (d.dtype == DType::f16)
      pairs<__half><<<blocks, kThreads, 0, stream_of(stream)>>>(x, r, o, d.n);
    else
      pairs<__nv_bfloat16><<<blocks, kThreads, 0, stream_of(stream)>>>(x, r, o, d.n);
    return launched("half_odd_tail");
  }
};

}  // namespace half_odd_tail

std::unique_ptr<IKernelArm> make_half_odd_tail() { return std::make_unique<half_odd_tail::Arm>(); }

}  // namespace kq::broken::cuda
