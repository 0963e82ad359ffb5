// Helpers shared by kq's tests: paths into the tree and running the kq binary.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kq::test {

// KQ_TEST_SOURCE_DIR and KQ_TEST_BIN_DIR override the build's paths: the GPU tests in a
// relocatable install (tools/bundle.sh) run far from the tree they were built in.
inline std::filesystem::path env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  // Relative to the working directory (ctest runs each test in its CTestTestfile's folder).
  return (v != nullptr && *v != '\0') ? std::filesystem::absolute(v) : fallback;
}
inline std::filesystem::path source_dir() { return env_or("KQ_TEST_SOURCE_DIR", KQ_SOURCE_DIR); }
inline std::filesystem::path bin_dir() { return env_or("KQ_TEST_BIN_DIR", KQ_BIN_DIR); }
inline std::filesystem::path kq_binary() { return bin_dir() / "kq"; }

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `kq ARGS` through the shell, from the source tree, capturing both streams; `prefix`
// goes before kq on the command line (`timeout -s TERM 5`).
inline Result run_kq(const std::string& args, const std::string& prefix = "") {
  std::string cmd = "cd '" + source_dir().string() + "' && " + prefix + " '" +
                    kq_binary().string() + "' " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh empty directory under the system temp dir.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() /
           ("kq-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace kq::test
