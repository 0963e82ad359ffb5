// Build facts a plugin reports in its identity. Declared here, defined by a file the build
// generates for each plugin (cmake/KqPlugin.cmake): the SHA-256 of each of its source files,
// computed when it is built, and the flags it was compiled with.
#pragma once
#include <vector>

#include "kq/arm.hpp"

namespace kq::build {
std::vector<SourceFile> source_files();
const char* compile_flags();
}  // namespace kq::build
