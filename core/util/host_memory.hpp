// The host's memory as /proc/meminfo gives it: what kq sizes its big cases and shared data by;
// and the kernel's count of OOM kills, by which a SIGKILL kq did not send is told apart.
#pragma once
#include <cstdint>

namespace kq {

std::uint64_t total_host_bytes();      // MemTotal; 0 when unknown
std::uint64_t available_host_bytes();  // MemAvailable; 0 when unknown
// The processes the kernel's OOM killer has killed since boot (/proc/vmstat's oom_kill, Linux
// 4.13 and later; it counts the kills of a container's cgroup limit too); 0 when unknown.
std::uint64_t oom_kills();

}  // namespace kq
