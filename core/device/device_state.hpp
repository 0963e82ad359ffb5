// What one arm may not change for the others: the device-wide settings that decide how another
// arm's kernels run (the persisting-L2 set-aside, the L2 fetch granularity, the preferred cache
// configuration) and the attributes of the stream kq gives it (the access-policy window, the
// priority). An arm that raises the persisting-L2 set-aside and marks its inputs persisting
// shrinks the L2 for every later kernel, and the flush does not evict persisting lines: such
// an arm is rejected by the check device_state, and what it changed is put back.
#pragma once
#include <cstddef>
#include <string>

namespace kq {

struct DeviceState {
  std::size_t persisting_l2 = 0;         // cudaLimitPersistingL2CacheSize, bytes
  std::size_t l2_fetch_granularity = 0;  // cudaLimitMaxL2FetchGranularity, bytes
  int cache_config = 0;                  // cudaDeviceGetCacheConfig
  int priority = 0;                      // the stream's
  std::size_t window_bytes = 0;          // the stream's access-policy window (0: none)
  const void* window_base = nullptr;
  float hit_ratio = 0.0f;
  int hit_property = 0, miss_property = 0;  // cudaAccessProperty
};

// The device's settings and `stream`'s attributes now (a stream of nullptr: the device's only).
// Host calls alone, a few microseconds; all zero where CUDA is absent.
DeviceState read_device_state(void* stream);

// What kq relies on, read once per process on a fresh stream, after setting the persisting-L2
// set-aside to zero: the device as the driver set it up otherwise. Call it before any arm's
// code runs on the device (the first call reads what the arms are held to).
const DeviceState& expected_device_state();

// What differs between `want` and `got`, one clause each ("the persisting-L2 set-aside
// (cudaLimitPersistingL2CacheSize) from 0 to 78643200 bytes"), or empty.
std::string device_state_changes(const DeviceState& want, const DeviceState& got);

// Sets the device's settings and `stream`'s attributes back to `want`, and evicts every
// persisting L2 line.
void restore_device_state(const DeviceState& want, void* stream);

// Evicts the persisting L2 lines (cudaCtxResetPersistingL2Cache): before every timed sample, so
// that lines an earlier call marked persisting do not survive the flush.
void reset_persisting_l2();

// The check after an arm's call: empty when `stream` and the device are as kq relies on; else
// what changed, after putting it back. Nothing is read while `stream` is being captured.
std::string check_device_state(void* stream);

}  // namespace kq
