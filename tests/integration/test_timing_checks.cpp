// The timing checks end to end on the CPU: an arm that qualifies and then reuses its result on
// the unchanged buffers of the timing loop is caught by the re-poisoned outputs, rejected with
// timing_output (size, mode and round named), kept out of the decision, and fails the run; one
// that copies a result kept for the same sampled contents is caught by the inputs kq changes
// before every timed call.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "util/json_lines.hpp"

using nlohmann::json;

TEST_CASE("a result reused on the timing loop's unchanged buffers is rejected by timing_output") {
  const auto dir = kq::test::temp_dir("timing-checks") / "run";
  auto r = kq::test::run_kq(
      "run specs/residual_relu.yaml --quick --include-broken --arms "
      "cpu_tbb,broken_cpu_reuse_unchanged --sizes 65536 --out " +
      dir.string());
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("broken_cpu_reuse_unchanged: rejected while timed (timing_output)") !=
        std::string::npos);

  const json s = json::parse(kq::test::read_file(dir / "summary.json"));
  std::map<std::string, json> arms;
  for (const auto& a : s["arms"]) arms[a["name"]] = a;
  CHECK(arms["cpu_tbb"]["verdict"] == "qualified");
  CHECK(arms["broken_cpu_reuse_unchanged"]["verdict"] == "rejected");
  CHECK(arms["broken_cpu_reuse_unchanged"]["check"] == "timing_output");
  CHECK(arms["broken_cpu_reuse_unchanged"]["case"] == "timing/65536");
  CHECK(arms["broken_cpu_reuse_unchanged"]["caught"] == true);

  int rejects = 0, checked_good = 0;
  for (const auto& rec : kq::read_json_lines(dir / "rounds.jsonl")) {
    const std::string type = rec.value("type", "");
    if (type == "timing_reject") {
      ++rejects;
      CHECK(rec["arm"] == "broken_cpu_reuse_unchanged");
      CHECK(rec["mode"] == "single");
      CHECK(rec["round"].get<int>() >= 0);
      CHECK(rec["message"].get<std::string>().find("single mode, round") != std::string::npos);
      CHECK(rec.contains("index"));
    }
    if (type == "recheck" && rec["arm"] == "cpu_tbb") {
      CHECK(rec["ok"] == true);
      checked_good = rec["checked"].get<int>();
    }
  }
  CHECK(rejects == 1);
  CHECK(checked_good >= 2);  // one in every eight rounds, and the closing round
  // The JUnit verdict agrees: rejected, as a known-broken candidate must be (no failure).
  const std::string junit = kq::test::read_file(dir / "junit.xml");
  const auto suite =
      junit.find("<testsuite name=\"broken_cpu_reuse_unchanged\" tests=\"1\" failures=\"0\"");
  REQUIRE(suite != std::string::npos);
  CHECK(junit.find("<property name=\"verdict\" value=\"rejected\"/>", suite) <
        junit.find("</testsuite>", suite));
}

TEST_CASE("a result cache keyed on sampled contents is caught by the inputs changed before calls") {
  // broken_cpu_content_cache passes every qualification case (a copy of its kept result is
  // right while the sampled elements are unchanged); kq's changes before every timed call fall
  // where it does not sample, so its copies are stale there.
  const auto dir = kq::test::temp_dir("timing-checks") / "cache";
  auto r = kq::test::run_kq(
      "run specs/residual_relu.yaml --quick --include-broken --arms "
      "cpu_tbb,broken_cpu_content_cache --sizes 65536 --out " +
      dir.string());
  INFO(r.out);
  const json s = json::parse(kq::test::read_file(dir / "summary.json"));
  std::map<std::string, json> arms;
  for (const auto& a : s["arms"]) arms[a["name"]] = a;
  CHECK(arms["cpu_tbb"]["verdict"] == "qualified");
  CHECK(arms["broken_cpu_content_cache"]["verdict"] == "rejected");
  CHECK(arms["broken_cpu_content_cache"]["check"] == "timing_output");
  CHECK(arms["broken_cpu_content_cache"]["caught"] == true);
  for (const auto& rec : kq::read_json_lines(dir / "rounds.jsonl"))
    if (rec.value("type", "") == "recheck" && rec["arm"] == "cpu_tbb") CHECK(rec["ok"] == true);
}
