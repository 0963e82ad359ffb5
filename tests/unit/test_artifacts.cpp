// finish_artifacts (artifacts/artifacts.hpp) disassembles each cubin once: the index after
// qualification and again after timing must not wait twice for the same disassembly, and a
// cubin written anew is disassembled anew.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "artifacts/artifacts.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("a cubin is disassembled once, and again when written anew") {
  const fs::path dir = kq::test::temp_dir("artifacts");
  const fs::path tools = dir / "tools", arm = dir / "arm", calls = dir / "calls";
  fs::create_directories(tools);
  fs::create_directories(arm);
  // A stand-in disassembler, first on PATH, that counts its calls.
  {
    std::ofstream s(tools / "cuobjdump");
    s << "#!/bin/sh\necho call >> '" << calls.string() << "'\necho \"SASS of $3\"\n";
  }
  fs::permissions(tools / "cuobjdump", fs::perms::owner_all);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (tools.string() + ":" + path).c_str(), 1);
  std::ofstream(arm / "k.cubin") << "not really a cubin";
  auto count = [&] {
    std::ifstream in(calls);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };

  auto index = kq::finish_artifacts(arm);
  CHECK(count() == 1);
  CHECK(index["sass"] == "cuobjdump");
  CHECK(kq::test::read_file(arm / "k.sass").find("SASS of") != std::string::npos);
  bool has_sass = false;
  for (const auto& f : index["files"]) has_sass = has_sass || f["name"] == "k.sass";
  CHECK(has_sass);

  kq::finish_artifacts(arm);
  CHECK(count() == 1);  // the SASS is newer than its cubin: kept

  std::ofstream(arm / "k.cubin") << "another cubin";
  fs::last_write_time(arm / "k.cubin",
                      fs::last_write_time(arm / "k.sass") + std::chrono::seconds(2));
  kq::finish_artifacts(arm);
  CHECK(count() == 2);
  ::setenv("PATH", path.c_str(), 1);
}
