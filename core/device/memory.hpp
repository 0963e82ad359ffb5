// Owning allocations on the host or a CUDA device, with the copies qualification and timing
// need. The host drives CUDA arms through the runtime API; no plugin code is involved.
#pragma once
#include <cstddef>
#include <string>

#include "device/fenced.hpp"
#include "kq/tensor.hpp"

namespace kq {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  // 256-byte aligned; throws std::runtime_error naming the size and the device on failure.
  DeviceMemory(Device device, std::size_t bytes);
  // `bytes` with unmapped memory right after them (Fence::after) or right before (before).
  DeviceMemory(Device device, std::size_t bytes, Fence fence);
  DeviceMemory(DeviceMemory&& o) noexcept;
  DeviceMemory& operator=(DeviceMemory&& o) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  void* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  Device device() const { return device_; }

  // Both wait for the copy. `host` may be read-only memory; big copies go through pinned
  // staging buffers (device/staged_copy.hpp).
  void upload(const void* host, std::size_t offset, std::size_t bytes);
  void download(void* host, std::size_t offset, std::size_t bytes) const;
  void fill_byte(unsigned char value) { fill(0, bytes_, value); }
  // Sets `bytes` from `offset` to `value`, and waits for it (a memset on the device: nothing
  // crosses the bus).
  void fill(std::size_t offset, std::size_t bytes, unsigned char value);
  // Sets `bytes` from `offset` to `value`, enqueued on `stream` (a CUDA stream: no wait) or at
  // once (the host).
  void fill_async(std::size_t offset, std::size_t bytes, unsigned char value, void* stream);

 private:
  void release();
  Device device_ = Device::cpu;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  FencedBlock fenced_;  // set for fenced allocations
};

// Whether this build and machine can run CUDA arms; when not, `why` says why.
bool cuda_usable(std::string* why);

// Waits for all work on the device (CUDA) and reports a pending error as an exception whose
// message names `what`. A no-op on the host.
void device_synchronize(Device device, const char* what);

}  // namespace kq
