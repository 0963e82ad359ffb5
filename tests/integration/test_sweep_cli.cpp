// kq sweep and kq merge end to end on this machine's CPU arms: a campaign of three specs, one
// task killed (its time limit), one left as a lost node leaves it (its record "running"), both
// named in the merged report, then run again by --resume while the completed one is kept, and
// the earlier attempt's run directory kept beside.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace fs = std::filesystem;
using kq::test::read_file;
using kq::test::run_kq;

namespace {

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p)); }

void write_json(const fs::path& p, const nlohmann::json& j) { std::ofstream(p) << j.dump(2); }

}  // namespace

TEST_CASE("kq sweep runs a campaign, names failed and lost tasks, resumes them, merges") {
  const fs::path dir = kq::test::temp_dir("sweep") / "campaign";
  const std::string c = "'" + dir.string() + "'";
  auto r = run_kq(
      "sweep specs/clamp.yaml specs/axpby.yaml specs/leaky_relu.yaml --arms cpu_tbb "
      "--quick --plan-only --out " +
      c);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  nlohmann::json plan = read_json(dir / "plan.json");
  REQUIRE(plan["tasks"].size() == 3);
  const std::string killed = plan["tasks"][1]["id"], lost = plan["tasks"][2]["id"];
  const double limit = plan["tasks"][1]["time_limit_s"];
  plan["tasks"][1]["time_limit_s"] = 0.5;  // killed long before its run ends
  write_json(dir / "plan.json", plan);

  r = run_kq("sweep --resume " + c);
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("2 of 3 tasks completed, 1 failed") != std::string::npos);
  const nlohmann::json killed_record = read_json(dir / "tasks" / (killed + ".json"));
  CHECK(killed_record["state"] == "failed");
  CHECK(killed_record["reason"].get<std::string>().find("time limit") != std::string::npos);

  // A node lost mid-run leaves its task "running", its run directory half written.
  nlohmann::json lost_record = read_json(dir / "tasks" / (lost + ".json"));
  REQUIRE(lost_record["state"] == "completed");
  lost_record["state"] = "running";
  lost_record.erase("ended");
  write_json(dir / "tasks" / (lost + ".json"), lost_record);
  r = run_kq("merge " + c);
  CHECK(r.exit_code == 1);
  const std::string md = read_file(dir / "campaign.md");
  CHECK(md.find("killed at its time limit") != std::string::npos);
  CHECK(md.find("never finished") != std::string::npos);

  plan["tasks"][1]["time_limit_s"] = limit;
  write_json(dir / "plan.json", plan);
  const std::string kept =
      read_json(dir / "tasks" / (plan["tasks"][0]["id"].get<std::string>() + ".json"))["started"];
  r = run_kq("sweep --resume " + c);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("3 of 3 tasks completed") != std::string::npos);
  CHECK(r.out.find("task 0:") == std::string::npos);  // the completed task was kept
  CHECK(read_json(dir / "tasks" /
                  (plan["tasks"][0]["id"].get<std::string>() + ".json"))["started"] == kept);
  CHECK(fs::exists(dir / "runs" / (lost + ".attempt-1") / "summary.json"));

  const nlohmann::json merged = read_json(dir / "campaign.json");
  CHECK(merged["completed"] == 3);
  for (const auto& t : merged["tasks"]) {
    CHECK(t["record"]["state"] == "completed");
    REQUIRE(t["arms"].size() == 1);
    CHECK(t["arms"][0]["arm"] == "cpu_tbb");
    CHECK(t["arms"][0]["outcome"] == "baseline");
  }
  const std::string md2 = read_file(dir / "campaign.md");
  CHECK(md2.find("## Arms by task") != std::string::npos);
  CHECK(md2.find("| cpu_tbb | baseline | baseline | baseline |") != std::string::npos);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("kq sweep and kq merge refuse what they cannot use, naming it") {
  const fs::path dir = kq::test::temp_dir("sweep-bad");
  auto r = run_kq("sweep specs/clamp.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--out") != std::string::npos);
  r = run_kq("sweep specs/no_such.yaml --out '" + (dir / "c").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no_such.yaml") != std::string::npos);
  std::ofstream(dir / "x") << "";
  r = run_kq("sweep specs/clamp.yaml --out '" + dir.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("not empty") != std::string::npos);
  r = run_kq("merge '" + dir.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("not a campaign") != std::string::npos);
  fs::remove_all(dir);
}
