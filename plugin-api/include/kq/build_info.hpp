// Build facts a plugin reports in its identity. Declared here, defined by a file the build
// generates for each plugin (cmake/KqPlugin.cmake): the SHA-256 of each of its source files,
// computed when it is built, and the flags it was compiled with.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "kq/arm.hpp"

namespace kq::build {
std::vector<SourceFile> source_files();
const char* compile_flags();

// An arm's identity with this plugin's build facts filled in. An exception (allocation) reaches
// the host, which refuses the arm and names it.
inline ArmIdentity identity(std::string name, std::string family, Device device,
                            std::string version) {
  ArmIdentity id;
  id.name = std::move(name);
  id.family = std::move(family);
  id.device = device;
  id.version = std::move(version);
  id.sources = source_files();
  id.compile_flags = compile_flags();
  return id;
}
}  // namespace kq::build
