// kq sweep's plan (core/campaign/plan.hpp): a task per spec and GPU type with its kq run command
// line, folders expanded in name order, bad inputs named; plan.json read back as written.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "campaign/plan.hpp"
#include "campaign/task_record.hpp"
#include "spec/spec.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace kq::campaign;

TEST_CASE("a plan has a task per spec and GPU type, each its own kq run") {
  const fs::path out = kq::test::temp_dir("campaign-plan");
  SweepOptions o;
  o.inputs = {kq::test::source_dir() / "specs/clamp.yaml", kq::test::source_dir() / "specs/gemm"};
  o.arms = {"cpu_tbb", "torch_eager_cpu"};
  o.quick = true;
  o.gpu_types = {"h100", "h200"};
  o.out = out;
  o.kq = "/opt/kq/bin/kq";
  const CampaignPlan plan = plan_campaign(o);
  REQUIRE(plan.tasks.size() == 8);  // (clamp + 3 GEMM specs) x 2 GPU types
  CHECK(plan.tasks[0].id == "000-clamp-h100");
  CHECK(plan.tasks[1].id == "001-clamp-h200");
  CHECK(plan.tasks[2].op == "linear_bias");  // the folder's specs in name order
  CHECK(plan.tasks[7].id == "007-matmul_bf16-h200");
  const Task& t = plan.tasks[0];
  CHECK(t.run_dir == "runs/000-clamp-h100");
  CHECK(t.argv == std::vector<std::string>{"/opt/kq/bin/kq", "run", t.spec, "--out",
                                           (fs::absolute(out) / t.run_dir).string(), "--arms",
                                           "cpu_tbb,torch_eager_cpu", "--quick"});
  CHECK(t.time_limit_s > 900);
  // Each task's qualification plan, as the task runs it (quick here): its cases and shapes.
  for (const Task& x : plan.tasks) {
    CHECK(x.cases > 0);
    CHECK(x.shapes > 1);
    CHECK(x.shapes <= x.cases);
  }
  CHECK(plan.tasks[0].cases == plan.tasks[1].cases);  // one spec, two GPU types: one plan
  SweepOptions full = o;
  full.quick = false;
  CHECK(plan_campaign(full).tasks[0].cases > t.cases);  // the full plan adds the large cases
  for (const Task& x : plan.tasks) CHECK(x.index == &x - plan.tasks.data());

  SweepOptions limited = o;
  limited.time_limit_s = 600;
  for (const Task& x : plan_campaign(limited).tasks) CHECK(x.time_limit_s == 600);

  write_plan(plan, out);
  CHECK(read_plan(out) == plan);
  // No record yet: not started.
  CHECK(read_record(out, t).state == TaskState::not_started);
  fs::remove_all(out);
}

TEST_CASE("a plan names the input it cannot use") {
  const fs::path dir = kq::test::temp_dir("campaign-bad");
  SweepOptions o;
  o.out = dir / "c";
  o.kq = "kq";
  o.inputs = {dir / "missing.yaml"};
  CHECK_THROWS_WITH_AS(plan_campaign(o), doctest::Contains("missing.yaml"), std::invalid_argument);
  o.inputs = {dir};  // a folder without specs
  CHECK_THROWS_WITH_AS(plan_campaign(o), doctest::Contains("no *.yaml"), std::invalid_argument);
  std::ofstream(dir / "bad.yaml") << "kq_spec: 2\nop: x\n";
  o.inputs = {dir / "bad.yaml"};
  CHECK_THROWS_WITH_AS(plan_campaign(o), doctest::Contains("bad.yaml"), kq::SpecError);
  fs::create_directories(o.out);
  std::ofstream(o.out / "plan.json") << "{not json";
  CHECK_THROWS_WITH_AS(read_plan(o.out), doctest::Contains("not a campaign plan"),
                       std::runtime_error);
  fs::remove_all(dir);
}
