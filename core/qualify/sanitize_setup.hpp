// What --sanitize sets up, for kq run, kq qualify and kq selftest alike: the compute-sanitizer
// tools to qualify CUDA arms under, and compute-sanitizer itself.
#pragma once
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace kq {

struct SanitizeSetup {
  std::vector<std::string> tools;   // empty: no sanitizer passes
  std::filesystem::path sanitizer;  // the compute-sanitizer executable
};

// The tools asked for (none: --sanitize not given) with compute-sanitizer
// (find_compute_sanitizer); without it, no tools, and a warning on `out`.
SanitizeSetup set_up_sanitize(const std::vector<std::string>& tools, std::ostream& out);

}  // namespace kq
