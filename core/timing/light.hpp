// The speed of light of a timed size: a copy moving as many bytes as one call of the op (read +
// written), timed among the arms like one of them. For CUDA arms a device-to-device copy on
// their stream; for CPU arms a host copy over TBB's threads, as cpu arms use them (of at most
// 64 MiB: a control of the host's speed, not a bound on the arm's): each is the
// control its arms are weighed against (the summary's % of light; kq compare's "the copy moved
// too"). Beside CUDA arms also the launch floor: an empty kernel launched and timed as a single
// sample is (the L2 flush and the blocking kernel's hold included), the part of a small call's
// time that is the launch's, not the arm's (kq compare's "the launch floor moved").
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "device/memory.hpp"
#include "device/stream.hpp"
#include "spec/spec.hpp"
#include "timing/timer.hpp"

namespace kq {

struct GemmLight;

struct Light {
  Device device = Device::cuda;
  bool floor = false;  // the launch floor: an empty kernel, no bytes
  DeviceMemory src, dst;
  std::shared_ptr<Stream> stream;  // CUDA only
  std::unique_ptr<SampleTimer> timer;
  std::size_t bytes = 0;  // copied; read + written = 2 * bytes
  // The compute light (timing/compute_light.hpp): the vendor GEMM, its FLOPs and what it is.
  std::shared_ptr<GemmLight> gemm;
  double flops = 0;
  std::string what;
};

// A copy reading and writing `moved` bytes in all (a call's bytes: plan/timed_points.hpp).
// stream: the CUDA arms' stream (device cuda), or nullptr (device cpu).
std::unique_ptr<Light> make_light(double moved, Device device, bool blocking_kernel,
                                  const std::shared_ptr<Stream>& stream);

// The smallest device copy taken where a full one does not fit, in bytes a buffer: a copy of
// 2 x 256 MiB is ten times any L2 of today's GPUs, so its GB/s is the memory's, as a full one's.
constexpr std::size_t kMinDeviceCopy = std::size_t{256} << 20;

// The device memory the device copy leaves free: the reference's copy, the checks and the arms'
// caching allocators allocate after it, and a copy that took the last bytes would fail them.
constexpr std::size_t kLightHeadroom = std::size_t{1} << 30;

// The device copy of make_light, as much of it as leaves kLightHeadroom free (the arms' buffers of
// a large size come first), halved while the device has no memory for it, down to
// kMinDeviceCopy a buffer; light->bytes says what it copies. Throws a CudaError (out of memory)
// where not even that fits.
std::unique_ptr<Light> make_device_light(double moved, bool blocking_kernel,
                                         const std::shared_ptr<Stream>& stream);

// The launch floor on the CUDA arms' stream.
std::unique_ptr<Light> make_floor(const Spec& spec, const std::shared_ptr<Stream>& stream);

// Enqueues a kernel that does nothing on `stream` (a CUDA stream).
void launch_empty_kernel(void* stream);

// Seconds one copy (or empty kernel) took.
double time_light(Light& l);

}  // namespace kq
