// What one call of an arm launches, from CUPTI's activity records: the kernels (name, grid,
// block, registers, shared memory, duration, theoretical occupancy) and any memory copy or set
// inside the call, which a kernel timed by events must not hide. CUPTI is loaded with dlopen
// (libcupti.so.13), so kq runs where it is absent; the profile then says why it is missing.
// Profiled calls are extra calls made after a size's timed samples, and the caller detaches
// CUPTI (detach_profiler) before timing anything else: once attached, CUPTI sits in the path of
// every CUDA call, and the timed samples must not pay for it.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

// {"kernels": N, "kernel_seconds": S, "memcpys": M, "memsets": K, "list": [{name, grid, block,
//  registers, shared_bytes, seconds, occupancy}], "stream_id": I, "off_stream": O,
//  "off_stream_kinds": ["kernel on stream 7", ...]}, or {"unavailable": "why"}. off_stream counts
// the kernels, copies and sets that ran on a stream other than `stream` (absent when this CUPTI
// cannot name streams). Work launched by another thread than the caller's while the call ran
// (a plugin's own thread, say) is not the call's: it is counted apart, as "other_threads" and
// "other_thread_kinds" (absent when this CUPTI cannot name threads), and nowhere else. `call`
// must enqueue its work on `stream`; this waits for the device.
nlohmann::json profile_call(void* stream, const std::function<void()>& call);

// Detaches CUPTI from the process (cuptiFinalize) after profile_call, so that later CUDA calls
// pay nothing for it; call it with no CUDA work in flight on other threads. Returns "" when
// CUPTI is detached or was never attached, otherwise why it stays attached.
std::string detach_profiler();

// Theoretical occupancy (active warps over the SM's maximum) of a kernel on the current device.
double theoretical_occupancy(int threads_per_block, int registers_per_thread, int shared_bytes);

}  // namespace kq
