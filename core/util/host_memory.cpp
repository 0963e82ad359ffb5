#include "util/host_memory.hpp"

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

}  // namespace kq
