#include "device/settings_environment.hpp"

#include <algorithm>
#include <array>
#include <string_view>

extern char** environ;

namespace kq {
namespace {

constexpr std::array<std::string_view, 16> kSettingsPrefixes = {
    "KQ_",    "TORCHINDUCTOR_", "TORCH_", "PYTORCH_", "INDUCTOR_", "TRITON_", "CUDA_", "CUBLAS",
    "CUDNN_", "NVIDIA_",        "NCCL_",  "OMP_",     "MKL_",      "TBB_",    "KMP_",  "NVRTC_"};
constexpr std::array<std::string_view, 4> kSettingsNames = {"LD_PRELOAD", "LD_LIBRARY_PATH",
                                                            "PYTHONPATH", "PYTHONHOME"};
// Set by kq for each run or worker, or recorded elsewhere.
constexpr std::array<std::string_view, 4> kSetByKq = {"CUDA_VISIBLE_DEVICES", "KQ_ARM_FILES",
                                                      "KQ_PYTHON_ARMS", "KQ_BIG_CASE_"};

bool is_setting(std::string_view name) {
  const auto prefixes = [&](std::string_view p) { return name.starts_with(p); };
  if (std::any_of(kSetByKq.begin(), kSetByKq.end(), prefixes)) return false;
  return std::find(kSettingsNames.begin(), kSettingsNames.end(), name) != kSettingsNames.end() ||
         std::any_of(kSettingsPrefixes.begin(), kSettingsPrefixes.end(), prefixes);
}

}  // namespace

std::map<std::string, std::string> settings_environment(const char* const* envp) {
  std::map<std::string, std::string> out;
  for (const char* const* e = envp; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    if (is_setting(entry.substr(0, eq)))
      out.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return out;
}

std::map<std::string, std::string> settings_environment() { return settings_environment(environ); }

}  // namespace kq
