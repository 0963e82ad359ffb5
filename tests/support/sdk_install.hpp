// The tests of the installed SDK (integration/test_sdk, integration/test_first_arm): this build
// installed once per test program into a temporary prefix, shell commands with their output, and
// the configure line of a project built against the install with this build's toolchain. The
// including target defines KQ_BUILD_DIR, KQ_CMAKE_COMMAND, KQ_CMAKE_GENERATOR, KQ_MAKE_PROGRAM and
// KQ_CXX_COMPILER (tests/CMakeLists.txt).
#pragma once
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace kq::test {

// `cmd` through the shell, stdout and stderr together.
inline Result sh(const std::string& cmd) {
  Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// A path quoted for the shell.
inline std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

inline nlohmann::json read_json(const std::filesystem::path& f) {
  std::ifstream in(f);
  return nlohmann::json::parse(in);
}

// The build installed into a temporary prefix, removed when the tests end.
struct Prefix {
  std::filesystem::path dir = temp_dir("sdk");
  Result install =
      sh("'" KQ_CMAKE_COMMAND "' --install '" KQ_BUILD_DIR "' --prefix " + q(dir) + " --strip");
  ~Prefix() { std::filesystem::remove_all(dir); }
};

// The one install of this test program.
inline const Prefix& prefix() {
  static Prefix p;
  return p;
}

// `cmake -S src -B build` against the prefix's SDK, with this build's generator and C++ compiler
// (`extra`: more -D options), then `cmake --build build`.
inline Result build_against(const Prefix& p, const std::filesystem::path& src,
                            const std::filesystem::path& build, const std::string& extra = "") {
  return sh("'" KQ_CMAKE_COMMAND "' -S " + q(src) + " -B " + q(build) +
            " -G '" KQ_CMAKE_GENERATOR "' -DCMAKE_MAKE_PROGRAM='" KQ_MAKE_PROGRAM
            "' -DCMAKE_CXX_COMPILER='" KQ_CXX_COMPILER "' -DCMAKE_PREFIX_PATH=" +
            q(p.dir) + " " + extra + " && '" KQ_CMAKE_COMMAND "' --build " + q(build));
}

}  // namespace kq::test
