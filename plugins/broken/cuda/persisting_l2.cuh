// Flaw: computes correctly, but first sets the device's persisting-L2 set-aside to its maximum
// (cudaLimitPersistingL2CacheSize) and gives the caller's stream an access-policy window that
// marks its first input persisting, and leaves both so. Persisting lines survive the L2 flush
// that precedes each timed sample, so its own input stays warm, and the set-aside shrinks the L2
// that every later kernel (the other arms, the device copy) gets: the others run slower and
// noisier, and it looks faster beside them. No value check can tell.
// Caught by: device_state (after every call kq reads the device's limits and its stream's
// attributes back).
#include <algorithm>
#include <memory>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace persisting_l2 {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("persisting_l2", "device_state") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    int dev = 0, set_aside = 0, window = 0;
    if (Status s = checked(cudaGetDevice(&dev), "cudaGetDevice"); !s.is_ok()) return s;
    if (Status s =
            checked(cudaDeviceGetAttribute(&set_aside, cudaDevAttrMaxPersistingL2CacheSize, dev),
                    "cudaDeviceGetAttribute");
        !s.is_ok())
      return s;
    if (Status s =
            checked(cudaDeviceGetAttribute(&window, cudaDevAttrMaxAccessPolicyWindowSize, dev),
                    "cudaDeviceGetAttribute");
        !s.is_ok())
      return s;
    if (set_aside > 0) {  // the flaw, part one: the device's L2 carved up for everyone
      if (Status s = checked(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize,
                                                static_cast<std::size_t>(set_aside)),
                             "cudaDeviceSetLimit");
          !s.is_ok())
        return s;
    }
    if (window > 0 && d.n > 0) {  // part two: its input marked persisting on kq's stream
      cudaStreamAttrValue v{};
      v.accessPolicyWindow.base_ptr = const_cast<float*>(d.x);
      v.accessPolicyWindow.num_bytes = std::min<std::size_t>(
          static_cast<std::size_t>(window), static_cast<std::size_t>(d.n) * sizeof(float));
      v.accessPolicyWindow.hitRatio = 1.0f;
      v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
      v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
      if (Status s = checked(
              cudaStreamSetAttribute(stream_of(stream), cudaStreamAttributeAccessPolicyWindow, &v),
              "cudaStreamSetAttribute");
          !s.is_ok())
        return s;
    }
    return launch_map2(d, stream, Relu{}, "persisting_l2");
  }
};

}  // namespace persisting_l2

std::unique_ptr<IKernelArm> make_persisting_l2() { return std::make_unique<persisting_l2::Arm>(); }

}  // namespace kq::broken::cuda
