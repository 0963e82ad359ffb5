#include "cuda_include.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace kq::nvrtc {
namespace {

bool has_headers(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir + "/cuda_fp16.h", ec) &&
         std::filesystem::is_regular_file(dir + "/cuda_bf16.h", ec);
}

}  // namespace

std::string cuda_include_dir(std::string& looked) {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("KQ_CUDA_INCLUDE"); d && *d) dirs.emplace_back(d);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* d = std::getenv(var); d && *d) dirs.push_back(std::string(d) + "/include");
#ifdef KQ_CUDA_INCLUDE_DIR
  dirs.emplace_back(KQ_CUDA_INCLUDE_DIR);
#endif
  dirs.emplace_back("/usr/local/cuda/include");
  looked.clear();
  for (const std::string& d : dirs) {
    if (has_headers(d)) return d;
    looked += (looked.empty() ? "" : ", ") + d;
  }
  return {};
}

}  // namespace kq::nvrtc
