// The speed of light of a timed size: a copy moving as many bytes as one call of the op (read +
// written), timed among the arms like one of them. For CUDA arms a device-to-device copy on
// their stream; for CPU arms a host copy over TBB's threads, as cpu arms use them (of at most
// 64 MiB: a control of the host's speed, not a bound on the arm's): each is the
// control its arms are weighed against (the summary's % of light; kq compare's "the copy moved
// too").
#pragma once
#include <cstddef>
#include <memory>

#include "device/memory.hpp"
#include "device/stream.hpp"
#include "spec/spec.hpp"
#include "timing/timer.hpp"

namespace kq {

struct Light {
  Device device = Device::cuda;
  DeviceMemory src, dst;
  std::shared_ptr<Stream> stream;  // CUDA only
  std::unique_ptr<SampleTimer> timer;
  std::size_t bytes = 0;  // copied; read + written = 2 * bytes
};

// stream: the CUDA arms' stream (device cuda), or nullptr (device cpu).
std::unique_ptr<Light> make_light(const Spec& spec, std::int64_t size, Device device,
                                  const std::shared_ptr<Stream>& stream);

// Seconds one copy took.
double time_light(Light& l);

}  // namespace kq
