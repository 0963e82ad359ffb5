// kq selftest end to end: every CPU candidate rejected by its declared check, the CPU arm
// qualified; CUDA arms are counted as skipped where there is no GPU.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "qualify/qualify_stage.hpp"
#include "test_support.hpp"

TEST_CASE("kq selftest rejects every broken candidate and qualifies every good arm") {
  auto dir = kq::test::temp_dir("selftest") / "st";
  auto r = kq::test::run_kq("selftest --quick --hang-timeout 10 --out " + dir.string());
  INFO(r.out);
  CHECK(r.exit_code == 0);
  auto summary = nlohmann::json::parse(kq::test::read_file(dir / "selftest.json"));
  CHECK(summary["broken_total"].get<int>() >= 14);
  CHECK(summary["broken_rejected"] == summary["broken_total"]);
  CHECK(summary["good_qualified"] == summary["good_total"]);
  const std::string last =
      "selftest: " + std::to_string(summary["broken_rejected"].get<int>()) + " of " +
      std::to_string(summary["broken_total"].get<int>()) + " broken candidates rejected, " +
      std::to_string(summary["good_qualified"].get<int>()) + " of " +
      std::to_string(summary["good_total"].get<int>()) + " good arms qualified";
  CHECK(r.out.find(last) != std::string::npos);
  // Each spec's run directory has its report and JUnit XML.
  CHECK(std::filesystem::exists(dir / "residual_relu" / "report.md"));
  CHECK(kq::test::read_file(dir / "residual_relu" / "junit.xml").find("<testsuites") !=
        std::string::npos);
}

TEST_CASE("kq selftest --sanitize warns, as kq run does, when compute-sanitizer is missing") {
  if (!kq::find_compute_sanitizer().empty()) {
    MESSAGE("compute-sanitizer is installed here: nothing to check");
    return;
  }
  const auto top = kq::test::temp_dir("selftest-sanitize");
  std::filesystem::create_directories(top / "specs");
  std::filesystem::copy_file(kq::test::source_dir() / "tests/data/specs/copy.yaml",
                             top / "specs" / "copy.yaml");
  const auto plugins = std::filesystem::path(KQ_TEST_PLUGIN_DIR) / "good";
  auto r = kq::test::run_kq("selftest --quick --no-timing --sanitize memcheck --specs '" +
                            (top / "specs").string() + "' --plugin-dir '" + plugins.string() +
                            "' --out '" + (top / "st").string() + "'");
  INFO(r.out);
  // The test plugin's arms are not made to qualify on copy.yaml: only the warning matters here.
  CHECK(r.out.find("selftest: ") != std::string::npos);
  CHECK(r.out.find("kq: --sanitize: compute-sanitizer is not on PATH; qualifying without it\n") !=
        std::string::npos);
}

namespace {

// kq selftest, with `flags`, over a folder of `top` holding `spec` alone and with kq's plugin
// `plugin` alone; the selftest's folder is top / "st".
kq::test::Result selftest_alone(const std::filesystem::path& top, const std::filesystem::path& spec,
                                const std::string& plugin, const std::string& flags) {
  std::filesystem::create_directories(top / "specs");
  std::filesystem::copy_file(spec, top / "specs" / spec.filename());
  std::filesystem::create_directories(top / "plugins");
  std::filesystem::copy_file(kq::test::kq_binary().parent_path() / "plugins" / plugin,
                             top / "plugins" / plugin);
  return kq::test::run_kq("selftest " + flags + " --specs '" + (top / "specs").string() +
                          "' --plugin-dir '" + (top / "plugins").string() + "' --out '" +
                          (top / "st").string() + "'");
}

}  // namespace

TEST_CASE("over a folder of the user's, a broken candidate for other specs is shown, not failed") {
  // Over the shipped specs every broken candidate must take one (the first test); copy.yaml is
  // taken by none of the broken CPU candidates, which is no fault of theirs.
  auto r = selftest_alone(kq::test::temp_dir("selftest-subset"),
                          kq::test::source_dir() / "tests/data/specs/copy.yaml",
                          "libkq_broken_cpu.so", "--quick --no-timing");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("  -     broken_cpu_crashes") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find("selftest: 0 of 0 broken candidates rejected") != std::string::npos);
}

TEST_CASE("kq selftest --sizes times every spec at those sizes, in full") {
  const auto top = kq::test::temp_dir("selftest-sizes");
  auto r = selftest_alone(top, kq::test::source_dir() / "specs/residual_relu.yaml", "libkq_cpu.so",
                          "--quick --sizes 4096,2^13");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("  ok    cpu_tbb") != std::string::npos);
  auto summary =
      nlohmann::json::parse(kq::test::read_file(top / "st" / "residual_relu" / "summary.json"));
  std::vector<std::int64_t> sizes;
  for (const auto& t : summary["timing"]) sizes.push_back(t["size"].get<std::int64_t>());
  CHECK(sizes == std::vector<std::int64_t>{4096, 8192});
}
