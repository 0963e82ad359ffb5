#include "util/host_memory.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

namespace kq {
namespace {

// The value of `key` ("MemTotal:") in /proc/meminfo, in bytes; 0 when absent.
std::uint64_t meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string k, unit;
  std::uint64_t kb = 0;
  while (in >> k >> kb >> unit)
    if (k == key) return kb * 1024;
  return 0;
}

}  // namespace

std::uint64_t total_host_bytes() { return meminfo_bytes("MemTotal:"); }
std::uint64_t available_host_bytes() { return meminfo_bytes("MemAvailable:"); }

std::uint64_t oom_kills() {
  // KQ_VMSTAT: a file of the same form instead, for the tests (a kill the kernel never made).
  const char* file = std::getenv("KQ_VMSTAT");
  std::ifstream in(file != nullptr && *file != '\0' ? file : "/proc/vmstat");
  std::string k;
  std::uint64_t n = 0;
  while (in >> k >> n)
    if (k == "oom_kill") return n;
  return 0;
}

}  // namespace kq
