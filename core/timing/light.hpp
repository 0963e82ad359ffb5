// The speed of light of a timed size: a device-to-device copy moving as many bytes as one call
// of the op (read + written), timed on the size's stream like the arms.
#pragma once
#include <cstddef>
#include <memory>

#include "device/memory.hpp"
#include "device/stream.hpp"
#include "spec/spec.hpp"
#include "timing/timer.hpp"

namespace kq {

struct Light {
  DeviceMemory src, dst;
  std::shared_ptr<Stream> stream;
  std::unique_ptr<SampleTimer> timer;
  std::size_t bytes = 0;  // copied; read + written = 2 * bytes
};

std::unique_ptr<Light> make_light(const Spec& spec, std::int64_t size,
                                  const std::shared_ptr<Stream>& stream);

// Seconds one copy took.
double time_light(Light& l);

}  // namespace kq
