#include "timing/light.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "device/cuda_check.hpp"
#include "timing/compute_light.hpp"

namespace kq {
namespace {

void device_copy(Light& l) {
#if KQ_HAVE_CUDA
  cuda_check(cudaMemcpyAsync(l.dst.data(), l.src.data(), l.bytes, cudaMemcpyDeviceToDevice,
                             static_cast<cudaStream_t>(l.stream->handle())),
             "the device copy");
#else
  (void)l;
#endif
}

// In blocks of 64 KiB over TBB's threads.
void host_copy(Light& l) {
  auto* dst = static_cast<unsigned char*>(l.dst.data());
  const auto* src = static_cast<const unsigned char*>(l.src.data());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, l.bytes, std::size_t{1} << 16),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      std::memcpy(dst + r.begin(), src + r.begin(), r.size());
                    });
}

}  // namespace

std::unique_ptr<Light> make_light(double moved, Device device, bool blocking_kernel,
                                  const std::shared_ptr<Stream>& stream) {
  auto l = std::make_unique<Light>();
  l->device = device;
  l->bytes = std::max<std::size_t>(static_cast<std::size_t>(moved / 2), 256);
  // The host copy is a control, not a bound: past the last-level cache 64 MiB tell the memory's
  // speed as well as the call's gigabytes would, without adding seconds to every round.
  if (device == Device::cpu) l->bytes = std::min<std::size_t>(l->bytes, std::size_t{64} << 20);
  l->src = DeviceMemory(device, l->bytes);
  l->dst = DeviceMemory(device, l->bytes);
  l->src.fill_byte(0x3c);
  l->dst.fill_byte(0);  // touched once, so that no sample pays for first-touch page faults
  l->stream = stream;
  l->timer = std::make_unique<SampleTimer>(device, stream ? stream->handle() : nullptr,
                                           device == Device::cuda && blocking_kernel);
  return l;
}

std::unique_ptr<Light> make_device_light(double moved, bool blocking_kernel,
                                         const std::shared_ptr<Stream>& stream) {
#if KQ_HAVE_CUDA
  // `want` is read + written: its buffers are want / 2 each, and halving it halves both.
  const std::size_t least = 2 * kMinDeviceCopy;
  const std::size_t need = kLightHeadroom + least;  // the least copy and its headroom
  std::size_t free_bytes = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo for the device copy");
  if (free_bytes < need)
    throw CudaError("no device memory for the device copy: " + std::to_string(free_bytes >> 20) +
                        " MiB free, where the least copy and its headroom need " +
                        std::to_string(need >> 20),
                    static_cast<int>(cudaErrorMemoryAllocation), false);
  double want = std::min(moved, static_cast<double>(free_bytes - kLightHeadroom));
  for (;; want /= 2) {
    try {
      return make_light(want, Device::cuda, blocking_kernel, stream);
    } catch (const CudaError& e) {
      if (!out_of_device_memory(e) || want / 2 < static_cast<double>(least)) throw;
    }
  }
#else
  return make_light(moved, Device::cuda, blocking_kernel, stream);
#endif
}

std::unique_ptr<Light> make_floor(const Spec& spec, const std::shared_ptr<Stream>& stream) {
  auto l = std::make_unique<Light>();
  l->floor = true;
  l->stream = stream;
  l->timer =
      std::make_unique<SampleTimer>(Device::cuda, stream->handle(), spec.timing.blocking_kernel);
  return l;
}

double time_light(Light& l) {
  return l.timer->time([&] {
    if (l.floor)
      launch_empty_kernel(l.stream->handle());
    else if (l.gemm)
      enqueue_gemm_light(*l.gemm, l.stream->handle());
    else if (l.device == Device::cuda)
      device_copy(l);
    else
      host_copy(l);
  });
}

}  // namespace kq
