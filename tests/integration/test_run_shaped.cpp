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
  CHECK(r.out.find("is a format-2 spec, timed at its timing points: choose them with --points") !=
        std::string::npos);
  CHECK(r.out.find("'{M: 64, N: 1000}'") != std::string::npos);
}

TEST_CASE("a bad --points is refused before anything runs, naming the wrong dim") {
  const fs::path dir = kq::test::temp_dir("run-shaped-bad-points");
  auto r = run_kq("run " + small_softmax(dir).string() + " --arms cpu_tbb --points '{M: 64}'");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--points '{M: 64}': N is not given") != std::string::npos);
  r = run_kq("run " + small_softmax(dir).string() + " --arms cpu_tbb --points 3");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("softmax has 2 (1 to 2)") != std::string::npos);
}

TEST_CASE("--points times a spec point and a new one; compare meets two runs at their points") {
  const fs::path dir = kq::test::temp_dir("run-shaped-points");
  const fs::path first = dir / "first", second = dir / "second";
  auto r = run_kq("run " + small_softmax(dir).string() +
                  " --quick --arms cpu_tbb --points 2 --points '{M: 16, N: 300}' --out " +
                  first.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(kq::test::read_file(first / "summary.json"));
  REQUIRE(summary["timing"].size() == 2);
  CHECK(summary["timing"][0]["size"] == 2);
  CHECK(summary["timing"][0]["point"] == "M=8,N=4097");
  CHECK(summary["timing"][1]["size"] == 3);
  CHECK(summary["timing"][1]["point"] == "M=16,N=300");
  CHECK(summary["timing"][1]["bytes"] == 2.0 * 2 * 16 * 300);
  // The new point is qualified as the spec's are.
  const std::string q = kq::test::read_file(first / "qualification.jsonl");
  CHECK(q.find("\"case\":\"timing/M=16,N=300\"") != std::string::npos);
  CHECK(q.find("\"case\":\"timing/M=64,N=1000\"") == std::string::npos);

  // Another new point, then M=16,N=300 by its label: the one point shared with the first run,
  // numbered 4 here against 3 there.
  r = run_kq("run " + small_softmax(dir).string() +
             " --quick --arms cpu_tbb --points '{M: 5, N: 7}' --points M=16,N=300 --out " +
             second.string());
  REQUIRE(r.exit_code == 0);
  const auto c = run_kq("compare " + first.string() + " " + second.string());
  INFO(c.out);
  CHECK((c.exit_code == 0 || c.exit_code == 1));
  CHECK(c.out.find("cpu_tbb  M=16,N=300") != std::string::npos);
  CHECK(c.out.find("cpu_tbb at M=8,N=4097 (single)") != std::string::npos);  // A only
  CHECK(c.out.find("cpu_tbb at M=5,N=7 (single)") != std::string::npos);     // B only
}
