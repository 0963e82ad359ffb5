// The installed SDK (cmake/KqSdk.cmake): the build is installed into a temporary prefix, then
// examples/out_of_tree_plugin is built against it with find_package(kq) and kq_add_plugin and
// installed into the prefix's bin/plugins, where the installed kq lists it and qualifies its arm,
// with its source's SHA-256 in the identity. Where plugins/python was built here, the installed
// copy of its sources is built again from the prefix alone (bin/build-python-plugin.sh), and the
// shipped numpy arm loads from it with the plugin's sources named as the repository names them.
#include <doctest/doctest.h>

#include "sdk_install.hpp"
#include "test_support.hpp"
#include "util/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using kq::test::Prefix;
using kq::test::q;
using kq::test::read_json;
using kq::test::sh;

// What `kq qualify` wrote for ARM (one arm) on residual_relu, run from the prefix's kq.
nlohmann::json qualify(const fs::path& prefix, const std::string& arm) {
  const fs::path out = prefix / ("run-" + arm);
  auto r = sh("cd " + q(prefix) + " && bin/kq qualify " +
              q(kq::test::source_dir() / "specs/residual_relu.yaml") + " --arms " + arm +
              " --quick --out " + q(out));
  INFO(r.out);
  CHECK(r.exit_code == 0);
  return {{"manifest", read_json(out / "manifest.json")},
          {"summary", read_json(out / "summary.json")}};
}

bool has_source(const nlohmann::json& arm, const std::string& path, const fs::path& file) {
  for (const auto& s : arm["sources"])
    if (s["path"] == path && s["sha256"] == kq::sha256_file(file)) return true;
  return false;
}

}  // namespace

TEST_CASE("an out-of-tree plugin builds against the installed SDK and kq lists its arm") {
  const Prefix& p = kq::test::prefix();
  INFO(p.install.out);
  REQUIRE(p.install.exit_code == 0);
  for (const char* f :
       {"include/kq/plugin_api.hpp", "include/kq/expr_match.hpp", "lib/cmake/kq/kqConfig.cmake",
        "lib/cmake/kq/kqConfigVersion.cmake", "lib/cmake/kq/KqAddPlugin.cmake"})
    CHECK(fs::exists(p.dir / f));

  const fs::path src = kq::test::source_dir() / "examples/out_of_tree_plugin";
  const fs::path build = p.dir / "example-build";
  // No CMAKE_INSTALL_PREFIX: the package makes it the kq install's.
  auto r = kq::test::build_against(p, src, build);
  if (r.exit_code == 0) r = sh("'" KQ_CMAKE_COMMAND "' --install " + q(build));
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(build / "plugins/libkq_example.so"));
  REQUIRE(fs::exists(p.dir / "bin/plugins/libkq_example.so"));

  r = sh(q(p.dir / "bin/kq") + " list");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("example_residual_relu") != std::string::npos);
  CHECK(r.out.find("libkq_example.so:") == std::string::npos);  // no load error

  const auto run = qualify(p.dir, "example_residual_relu");
  const auto& arm = run["manifest"]["arms"][0];
  INFO(arm.dump());
  CHECK(arm["name"] == "example_residual_relu");
  CHECK(has_source(arm, "example_arm.cpp", src / "example_arm.cpp"));
  const std::string flags = arm["compile_flags"];
  CHECK(flags.rfind(KQ_CXX_COMPILER_ID " ", 0) == 0);
  CHECK(flags.find(" C++20 ") != std::string::npos);
  CHECK(run["summary"]["arms"][0]["verdict"] == "qualified");
}

TEST_CASE("plugins/python builds from the install alone, its shipped arm listed") {
  const std::string python = KQ_TEST_PYTHON;
  if (python.empty()) {
    MESSAGE(
        "skipped: plugins/python was not built here (no Python development files or "
        "pybind11)");
    return;
  }
  const Prefix& p = kq::test::prefix();
  INFO(p.install.out);
  REQUIRE(p.install.exit_code == 0);
  const fs::path plugin = p.dir / "bin/plugins/libkq_python.so";
  fs::remove(plugin);  // the one built in this tree, as tools/bundle.sh does
  REQUIRE(fs::exists(p.dir / "share/kq/plugins/python/CMakeLists.txt"));

  auto r = sh("CXX='" KQ_CXX_COMPILER "' JOBS=2 " + q(p.dir / "bin/build-python-plugin.sh") + " " +
              q(p.dir) + " '" + python + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(plugin));

  r = sh(q(p.dir / "bin/kq") + " list");
  INFO(r.out);
  CHECK(r.out.find("numpy_residual_relu") != std::string::npos);
  CHECK(r.out.find("load errors") == std::string::npos);

  const auto run = qualify(p.dir, "numpy_residual_relu");
  const auto& arm = run["manifest"]["arms"][0];
  INFO(arm.dump());
  const fs::path tree = kq::test::source_dir();
  CHECK(has_source(arm, "plugins/python/plugin.cpp", tree / "plugins/python/plugin.cpp"));
  CHECK(has_source(arm, "plugins/python/arms/numpy_residual_relu.py",
                   tree / "plugins/python/arms/numpy_residual_relu.py"));
  CHECK(run["summary"]["arms"][0]["verdict"] == "qualified");
}
