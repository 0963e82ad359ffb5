// kq run on a format-2 spec under a small reference budget (KQ_REFERENCE_WORK_BUDGET): the cases
// and timing points above it are checked at sampled elements end to end (shared case data,
// workers, the timing loop's checks), and qualification.jsonl says how many were compared.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "test_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("a run under a small reference budget samples the large cases and records it") {
  const fs::path dir = kq::test::temp_dir("run-sampled");
  std::string text =
      kq::test::read_file(kq::test::source_dir() / "tests/data/specs_v2/softmax_f32.yaml");
  const std::string timing = "timing: {points: [{M: 4096, N: 4096}]}";
  REQUIRE(text.find(timing) != std::string::npos);
  text.replace(text.find(timing), timing.size(),
               "timing: {points: [{M: 64, N: 1000}], max_seconds: 2}");
  const fs::path spec = dir / "softmax_small.yaml";
  std::ofstream(spec) << text;

  setenv("KQ_REFERENCE_WORK_BUDGET", "100000", 1);  // 64 x 1000 softmax: about 450000
  auto r = kq::test::run_kq("run " + spec.string() + " --quick --arms cpu_tbb --out " +
                            (dir / "run").string());
  unsetenv("KQ_REFERENCE_WORK_BUDGET");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("cpu_tbb: qualified") != std::string::npos);

  std::istringstream lines(kq::test::read_file(dir / "run" / "qualification.jsonl"));
  int sampled = 0, whole = 0;
  bool timed_point_sampled = false;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("type", "") != "case" || !j.value("in_contract", false)) continue;
    if (!j.contains("sampled_elements")) {
      ++whole;
      continue;
    }
    ++sampled;
    CHECK(j["sampled_elements"].get<std::int64_t>() == 4096);
    CHECK(j["result"] == "passed");
    if (j["case"] == "timing/M=64,N=1000") timed_point_sampled = true;
  }
  CHECK(sampled > 0);
  CHECK(whole > 0);  // the small points stay whole
  CHECK(timed_point_sampled);
  // The timing loop checked its outputs at the samples too, and found them right.
  const std::string rounds = kq::test::read_file(dir / "run" / "rounds.jsonl");
  CHECK(rounds.find("timing_reject") == std::string::npos);
}
