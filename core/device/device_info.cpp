#include "device/device_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "device/cuda_check.hpp"
#include "device/memory.hpp"
#include "device/settings_environment.hpp"
#include "util/host_memory.hpp"

namespace kq {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

nlohmann::json machine_info() {
  nlohmann::json j;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  j["hostname"] = host;
  utsname u{};
  if (uname(&u) == 0) j["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  j["cpu"] = cpu_model();
  j["cores"] = std::thread::hardware_concurrency();
  j["memory_bytes"] = total_host_bytes();
  j["gpus"] = nlohmann::json::array();
  // Which of the host's GPUs this process was given (kq sweep gives each task one).
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) j["cuda_visible_devices"] = v;
  j["environment"] = settings_environment();
  std::string why;
  if (!cuda_usable(&why)) {
    j["cuda_unusable"] = why;
    return j;
  }
#if KQ_HAVE_CUDA
  int drv = 0, rt = 0, n = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  j["cuda_driver"] = drv;
  j["cuda_runtime"] = rt;
  cudaGetDeviceCount(&n);
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    int clock = 0, mem_clock = 0, bus = 0;
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, d);
    cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, d);
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, d);
    j["gpus"].push_back({{"name", p.name},
                         {"cc", std::to_string(p.major) + "." + std::to_string(p.minor)},
                         {"sms", p.multiProcessorCount},
                         {"l2_bytes", p.l2CacheSize},
                         {"memory_bytes", p.totalGlobalMem},
                         {"clock_khz", clock},
                         {"mem_clock_khz", mem_clock},
                         {"bus_width_bits", bus}});
  }
#endif
  return j;
}

std::string machine_short_name(const nlohmann::json& info) {
  std::string s;
  if (!info["gpus"].empty()) {
    s = info["gpus"][0].value("name", "");
    if (auto p = s.rfind(' '); p != std::string::npos)
      s = s.substr(p + 1);  // "NVIDIA H200" -> H200
  }
  if (s.empty()) s = info.value("hostname", "host");
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  return out;
}

}  // namespace kq
