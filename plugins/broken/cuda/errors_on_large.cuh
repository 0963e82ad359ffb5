// Flaw: returns an error for more than 2^20 elements (a fixed-size scratch buffer), though the
// contract admits any size. Caught by: arm_error (size/1048579).
#include <memory>
#include <string>

#include "cuda_common.cuh"

namespace kq::broken::cuda {
namespace errors_on_large {

class Arm final : public CudaArm {
 public:
  Arm() : CudaArm("errors_on_large", "arm_error") {}

 protected:
  Status compute(std::span<const TensorView> in, std::span<const TensorView> out,
                 void* stream) override {
    const Dense2 d = dense2(in, out);
    if (d.n > kScratch)
      return Status::error("scratch buffer holds " + std::to_string(kScratch) + " elements, " +
                           std::to_string(d.n) + " requested");
    return launch_map2(d, stream, Relu{}, "errors_on_large");
  }

 private:
  static constexpr std::int64_t kScratch = std::int64_t{1} << 20;
};

}  // namespace errors_on_large

std::unique_ptr<IKernelArm> make_errors_on_large() {
  return std::make_unique<errors_on_large::Arm>();
}

}  // namespace kq::broken::cuda
