#include "timing/light.hpp"

#include <algorithm>

#include "device/cuda_check.hpp"

namespace kq {

std::unique_ptr<Light> make_light(const Spec& spec, std::int64_t size,
                                  const std::shared_ptr<Stream>& stream) {
  auto l = std::make_unique<Light>();
  const std::size_t moved =
      (spec.op.inputs.size() + 1) * dtype_size(spec.op.dtype) * static_cast<std::size_t>(size);
  l->bytes = std::max<std::size_t>(moved / 2, 256);
  l->src = DeviceMemory(Device::cuda, l->bytes);
  l->dst = DeviceMemory(Device::cuda, l->bytes);
  l->src.fill_byte(0x3c);
  l->stream = stream;
  l->timer =
      std::make_unique<SampleTimer>(Device::cuda, l->stream->handle(), spec.timing.blocking_kernel);
  return l;
}

double time_light(Light& l) {
#if KQ_HAVE_CUDA
  return l.timer->time([&] {
    cuda_check(cudaMemcpyAsync(l.dst.data(), l.src.data(), l.bytes, cudaMemcpyDeviceToDevice,
                               static_cast<cudaStream_t>(l.stream->handle())),
               "the device copy");
  });
#else
  (void)l;
  return 0;
#endif
}

}  // namespace kq
