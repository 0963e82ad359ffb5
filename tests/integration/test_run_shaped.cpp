// kq run on a format-2 spec, end to end on the CPU: qualification over the planned points, the
// timing at the spec's points, the records and reports naming each point.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace fs = std::filesystem;
using kq::test::run_kq;

namespace {

// tests/data/specs_v2/softmax.yaml timed at two small points, cpu_tbb its own baseline.
fs::path small_softmax(const fs::path& dir) {
  std::string text =
      kq::test::read_file(kq::test::source_dir() / "tests/data/specs_v2/softmax.yaml");
  const std::string timing = "  points: [{M: 32768, N: 4096}, {M: 4096, N: 16384}]\n";
  const std::string decision = "decision: {baseline: torch_compile, eager: torch_eager, ";
  REQUIRE(text.find(timing) != std::string::npos);
  REQUIRE(text.find(decision) != std::string::npos);
  text.replace(text.find(timing), timing.size(),
               "  points: [{M: 64, N: 1000}, {M: 8, N: 4097}]\n  max_seconds: 2\n");
  text.replace(text.find(decision), decision.size(), "decision: {baseline: cpu_tbb, ");
  const fs::path spec = dir / "softmax_small.yaml";
  std::ofstream(spec) << text;
  return spec;
}

}  // namespace

TEST_CASE("a format-2 spec qualifies and is timed at its points, named in records and reports") {
  const fs::path dir = kq::test::temp_dir("run-shaped");
  const fs::path spec = small_softmax(dir);
  auto r =
      run_kq("run " + spec.string() + " --quick --arms cpu_tbb --out " + (dir / "run").string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("cpu_tbb: qualified") != std::string::npos);
  CHECK(r.out.find("  M=64,N=1000: ") != std::string::npos);
  CHECK(r.out.find("  M=8,N=4097: ") != std::string::npos);
  CHECK(r.out.find("Keep cpu_tbb") != std::string::npos);

  const auto summary = nlohmann::json::parse(kq::test::read_file(dir / "run" / "summary.json"));
  REQUIRE(summary["timing"].size() == 2);
  CHECK(summary["timing"][0]["size"] == 1);
  CHECK(summary["timing"][0]["point"] == "M=64,N=1000");
  CHECK(summary["timing"][0]["bytes"] == 2.0 * 2 * 64 * 1000);
  CHECK(summary["timing"][0]["flops"].get<double>() > 0);
  CHECK(summary["timing"][0]["arms"][0]["gbps"].get<double>() > 0);
  CHECK(summary["timing"][1]["point"] == "M=8,N=4097");

  const std::string md = kq::test::read_file(dir / "run" / "report.md");
  CHECK(md.find("### M=64,N=1000 (") != std::string::npos);
  CHECK(md.find("GFLOP/s") != std::string::npos);
  const std::string rounds = kq::test::read_file(dir / "run" / "rounds.jsonl");
  CHECK(rounds.find("\"point\":\"M=8,N=4097\"") != std::string::npos);
  // The timed points are qualified: each is a case of the plan.
  const std::string q = kq::test::read_file(dir / "run" / "qualification.jsonl");
  CHECK(q.find("\"case\":\"timing/M=8,N=4097\"") != std::string::npos);
}

TEST_CASE("--sizes is refused for a format-2 spec: it is timed at its points") {
  const fs::path dir = kq::test::temp_dir("run-shaped-sizes");
  auto r = run_kq("run " + small_softmax(dir).string() + " --quick --arms cpu_tbb --sizes 4096");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("is a format-2 spec, timed at its timing points") != std::string::npos);
}
