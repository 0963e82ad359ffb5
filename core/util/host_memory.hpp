// The host's memory as /proc/meminfo gives it: what kq sizes its big cases and shared data by.
#pragma once
#include <cstdint>

namespace kq {

std::uint64_t total_host_bytes();      // MemTotal; 0 when unknown
std::uint64_t available_host_bytes();  // MemAvailable; 0 when unknown

}  // namespace kq
