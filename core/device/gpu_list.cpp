#include "device/gpu_list.hpp"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "device/cuda_check.hpp"
#include "util/env_number.hpp"

namespace kq {
namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    const auto a = part.find_first_not_of(' ');
    const auto b = part.find_last_not_of(' ');
    out.push_back(a == std::string::npos ? "" : part.substr(a, b - a + 1));
  }
  if (!s.empty() && s.back() == ',') out.push_back("");  // "0,": an empty last entry
  return out;
}

std::vector<std::string> device_names() {
  if (const char* fake = std::getenv("KQ_FAKE_GPUS")) return split(fake);
  std::vector<std::string> names;
#if KQ_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return names;
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    names.push_back(cudaGetDeviceProperties(&p, d) == cudaSuccess ? p.name : "GPU");
  }
#endif
  return names;
}

std::string seen(const std::vector<GpuSlot>& visible) {
  if (visible.empty()) return "this machine sees no GPU";
  std::string s = "this machine sees " + std::to_string(visible.size()) + ": ";
  for (const GpuSlot& g : visible) s += (g.index ? ", " : "") + describe(g);
  return s;
}

}  // namespace

std::vector<GpuSlot> visible_gpus() {
  const std::vector<std::string> names = device_names();
  // Where CUDA_VISIBLE_DEVICES narrows what this process sees, a child is named the same GPU
  // by this process's entry for it.
  std::vector<std::string> entries;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) entries = split(v);
  std::vector<GpuSlot> out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out.push_back(
        {static_cast<int>(i), i < entries.size() ? entries[i] : std::to_string(i), names[i]});
  return out;
}

std::vector<GpuSlot> choose_gpus(const std::string& devices, const std::vector<GpuSlot>& visible) {
  if (devices == "all") return visible;
  std::vector<GpuSlot> out;
  for (const std::string& e : split(devices)) {
    const std::optional<std::uint64_t> number = whole_number(e);
    if (!number)
      throw std::invalid_argument("--devices: '" + e +
                                  "' is no GPU number (a list such as 0,1, or all)");
    if (*number >= visible.size())
      throw std::invalid_argument("--devices: no GPU " + e + "; " + seen(visible));
    const int n = static_cast<int>(*number);
    for (const GpuSlot& g : out)
      if (g.index == n) throw std::invalid_argument("--devices: GPU " + e + " named twice");
    out.push_back(visible[static_cast<std::size_t>(n)]);
  }
  return out;
}

std::string describe(const GpuSlot& g) {
  return "GPU " + std::to_string(g.index) + " (" + g.name + ")";
}

}  // namespace kq
