// kq sweep and kq merge end to end on this machine's CPU arms: a campaign of three specs, one
// task killed (its time limit), one left as a lost node leaves it (its record "running"), both
// named in the merged report, then run again by --resume while the completed one is kept, and
// the earlier attempt's run directory kept beside.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
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

// The processes whose command line names `text` (a campaign's folder: its tasks' kq run and
// their workers name it), after giving those just killed a few seconds to go.
int processes_naming(const std::string& text) {
  int n = 0;
  for (int tries = 0; tries < 50; ++tries) {
    n = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
      if (e.path().filename().string().find_first_not_of("0123456789") != std::string::npos)
        continue;
      std::string cmdline = read_file(e.path() / "cmdline");
      for (char& ch : cmdline)
        if (ch == '\0') ch = ' ';
      if (cmdline.find(text) != std::string::npos) ++n;
    }
    if (n == 0) return 0;
    usleep(100000);
  }
  return n;
}

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
  // What the plan asks of qualification, said and kept.
  CHECK(r.out.find("  qualification: ") != std::string::npos);
  CHECK(r.out.find("  the most shapes: ") != std::string::npos);
  CHECK(plan["tasks"][0]["shapes"].get<int>() > 1);
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
  CHECK(read_file(dir / "campaign.html").find("<td>baseline</td>") != std::string::npos);
  CHECK(md2.find("| cpu_tbb | baseline | baseline | baseline |") != std::string::npos);

  // kq compare between campaigns: task by task; with itself, nothing changed.
  r = run_kq("compare " + c + " " + c);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("3 task(s): 0 changed beyond noise, 3 unchanged, 0 not compared") !=
        std::string::npos);
  CHECK(r.out.find("== clamp on local") != std::string::npos);
  r = run_kq("compare " + c + " '" + (dir / "runs" / killed).string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("a campaign is compared with a campaign") != std::string::npos);

  // Provenance: a task run by another kq build, with other sources for the same arm, is flagged.
  const fs::path manifest = dir / "runs" / killed / "manifest.json";
  nlohmann::json m = read_json(manifest);
  m["kq"]["commit"] = std::string(40, '0');
  m["kq"]["dirty"] = false;
  m["arms"][0]["sources"][0]["sha256"] = std::string(64, 'f');
  write_json(manifest, m);
  // ... and one local task that ran on a GPU where the others ran on none: two machines.
  m["machine"]["gpus"] = nlohmann::json::array({{{"name", "NVIDIA H100 80GB HBM3"}}});
  write_json(manifest, m);
  r = run_kq("merge " + c);
  INFO(r.out);
  const std::string md3 = read_file(dir / "campaign.md");
  CHECK(md3.find("- flag: the tasks ran 2 kq builds: " + std::string(40, '0') + " (" + killed +
                 ")") != std::string::npos);
  CHECK(md3.find("- flag: arm cpu_tbb ran from different sources: one set in ") !=
        std::string::npos);
  CHECK(md3.find("- flag: GPU type local ran on 2 GPU models: ") == std::string::npos);
  CHECK(md3.find("with timing cut short") == std::string::npos);
  // A run whose timing worker died: completed, its decision on the sizes timed, named so.
  std::ofstream(dir / "runs" / killed / "rounds.jsonl", std::ios::app)
      << R"({"reason":"timing worker exit code 3","type":"timing_stopped"})"
      << "\n";
  nlohmann::json other = read_json(dir / "runs" / lost / "manifest.json");
  other["machine"]["gpus"] = nlohmann::json::array({{{"name", "NVIDIA H200"}}});
  other["kq"]["dirty"] = true;  // built from uncommitted sources (this build may be too)
  write_json(dir / "runs" / lost / "manifest.json", other);
  r = run_kq("merge " + c);
  const std::string md4 = read_file(dir / "campaign.md");
  const std::size_t dirty = md4.find(" ran a kq built from uncommitted sources: ");
  REQUIRE(dirty != std::string::npos);
  CHECK(md4.substr(dirty, md4.find('\n', dirty) - dirty).find(lost) != std::string::npos);
  CHECK(md4.find("- flag: GPU type local ran on 2 GPU models: NVIDIA H100 80GB HBM3 (1 task); "
                 "NVIDIA H200 (1 task): their timings and decisions do not compare") !=
        std::string::npos);
  CHECK(md4.find("3 completed (1 with timing cut short), 0 failed") != std::string::npos);
  CHECK(md4.find("| completed, timing cut short (timing worker exit code 3) |") !=
        std::string::npos);
  CHECK(read_json(dir / "campaign.json")["timing_cut_short"] == 1);

  // A completed task whose run directory is gone (a copy of the campaign without its runs): its
  // result is lost, said so, and --resume runs it again.
  const std::string first = plan["tasks"][0]["id"];
  fs::rename(dir / "runs" / first, dir.parent_path() / "moved-away");
  r = run_kq("merge " + c);
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("2 of 3 tasks completed, 1 failed") != std::string::npos);
  CHECK(read_file(dir / "campaign.md").find("is missing: the run's result is lost") !=
        std::string::npos);
  r = run_kq("sweep --resume " + c);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("3 of 3 tasks completed") != std::string::npos);
  CHECK(fs::exists(dir / "runs" / first / "summary.json"));
  fs::remove_all(dir.parent_path());
}

// A stop (SIGTERM to the sweep's process group here, as a terminal's Ctrl-C sends SIGINT to
// its) does not reach a task's kq run, which has a process group of its own: the sweep passes
// it on, the task's record says it was stopped, no later task starts, nothing is left running.
TEST_CASE("kq sweep stopped by a signal stops its running task and says so") {
  const fs::path dir = kq::test::temp_dir("sweep-stop") / "c";
  const std::string c = "'" + dir.string() + "'";
  auto r = run_kq(
      "sweep specs/residual_relu.yaml specs/clamp.yaml --arms cpu_tbb --quick --plan-only "
      "--out " +
      c);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json plan = read_json(dir / "plan.json");
  const auto t0 = std::chrono::steady_clock::now();
  r = run_kq("sweep --resume " + c, "timeout -s TERM --preserve-status 4");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.out);
  CHECK(r.exit_code == 128 + SIGTERM);
  CHECK(took < 4 + 20 + 10);  // the stop, the task's grace, the merge
  CHECK(r.out.find("stopped by signal 15") != std::string::npos);
  CHECK(r.out.find("kq sweep --resume") != std::string::npos);
  const nlohmann::json first =
      read_json(dir / "tasks" / (plan["tasks"][0]["id"].get<std::string>() + ".json"));
  CHECK(first["state"] == "failed");
  CHECK(first["reason"].get<std::string>().find("stopped: kq received signal 15") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "tasks" / (plan["tasks"][1]["id"].get<std::string>() + ".json")));
  CHECK(processes_naming(dir.string()) == 0);
  CHECK(read_file(dir / "campaign.md").find("stopped: kq received signal 15") != std::string::npos);
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
  r = run_kq("sweep specs/clamp.yaml --partition gpu --out '" + (dir / "c").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--partition needs --slurm") != std::string::npos);

  // A task whose kq is not where the plan says (another node's path) fails, saying so.
  const fs::path c = dir / "c";
  REQUIRE(run_kq("sweep specs/clamp.yaml --plan-only --out '" + c.string() + "'").exit_code == 0);
  nlohmann::json plan = read_json(c / "plan.json");
  plan["tasks"][0]["argv"][0] = "/nonexistent/kq";
  write_json(c / "plan.json", plan);
  r = run_kq("sweep --resume '" + c.string() + "'");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("cannot start /nonexistent/kq") != std::string::npos);
  r = run_kq("sweep --resume '" + c.string() + "' --quick");
  CHECK(r.exit_code == 2);
  fs::remove_all(dir);
}

// --slurm through a stand-in sbatch on PATH that keeps each script it is given: the arrays per
// GPU type, their #SBATCH lines, the merge job after them, an array task run as Slurm runs it,
// and --resume submitting only what did not complete.
TEST_CASE("kq sweep --slurm writes an array per GPU type and a merge job after them") {
  const fs::path root = kq::test::temp_dir("sweep-slurm");
  const fs::path bin = root / "bin", jobs = root / "jobs", dir = root / "campaign";
  fs::create_directories(bin);
  fs::create_directories(jobs);
  std::ofstream(bin / "sbatch") << "#!/bin/sh\n"
                                   "[ -n \"$KQ_FAKE_SBATCH_FAIL\" ] && { echo 'sbatch: error: "
                                   "invalid partition' >&2; exit 1; }\n"
                                   "n=$(cat '" +
                                       jobs.string() +
                                       "/next' 2>/dev/null || echo 100)\n"
                                       "echo $((n + 1)) > '" +
                                       jobs.string() +
                                       "/next'\n"
                                       "cp \"$2\" '" +
                                       jobs.string() +
                                       "'/job-$n.sh\n"
                                       "echo \"$n;cluster\"\n";
  fs::permissions(bin / "sbatch", fs::perms::owner_all);
  const std::string path = bin.string() + ":" + std::getenv("PATH");
  setenv("PATH", path.c_str(), 1);
  const std::string c = "'" + dir.string() + "'";

  auto r = run_kq(
      "sweep specs/clamp.yaml specs/leaky_relu.yaml --arms cpu_tbb --quick --slurm "
      "--gpu-types h100,h200 --partition gpu --sbatch-arg=--account=lab --out " +
      c);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("submitted h100: job array 100 (2 task(s)") != std::string::npos);
  CHECK(r.out.find("submitted h200: job array 101 (2 task(s)") != std::string::npos);
  CHECK(r.out.find("kq merge runs as job 102") != std::string::npos);
  const std::string h100 = read_file(jobs / "job-100.sh");
  for (const char* line :
       {"#SBATCH --array=0,2\n", "#SBATCH --gres=gpu:h100:1\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --account=lab\n", "#SBATCH --job-name=kq-h100\n", "#SBATCH --time="})
    CHECK_MESSAGE(h100.find(line) != std::string::npos, line << " in\n" << h100);
  CHECK(h100.find("sweep-task '" + dir.string() + "' \"$SLURM_ARRAY_TASK_ID\"") !=
        std::string::npos);
  CHECK(read_file(jobs / "job-101.sh").find("#SBATCH --array=1,3\n") != std::string::npos);
  CHECK(read_file(jobs / "job-102.sh").find("#SBATCH --dependency=afterany:100:101\n") !=
        std::string::npos);

  // Array task 0 as Slurm starts it.
  r = run_kq("sweep-task " + c + " 0");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  // Resumed: task 0 is kept, the rest submitted again.
  r = run_kq("sweep --resume " + c + " --slurm --gres none");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  // The arrays in the order of their first remaining task: h200's (task 1), then h100's.
  CHECK(read_file(jobs / "job-103.sh").find("#SBATCH --array=1,3\n") != std::string::npos);
  const std::string again = read_file(jobs / "job-104.sh");
  CHECK(again.find("#SBATCH --array=2\n") != std::string::npos);
  CHECK(again.find("--gres") == std::string::npos);

  setenv("KQ_FAKE_SBATCH_FAIL", "1", 1);
  r = run_kq("sweep --resume " + c + " --slurm");
  unsetenv("KQ_FAKE_SBATCH_FAIL");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("invalid partition") != std::string::npos);
  r = run_kq("sweep specs/clamp.yaml --gpu-types h100 --out '" + (root / "c2").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--gpu-types needs --slurm") != std::string::npos);
  fs::remove_all(root);
}

// Two stand-in GPUs (KQ_FAKE_GPUS): the tasks of CPU specs take turns on them as a GPU host's
// would, each given its GPU through CUDA_VISIBLE_DEVICES; the merged report says which ran what.
TEST_CASE("kq sweep runs one task on each GPU at a time, and says which GPU ran each") {
  const fs::path dir = kq::test::temp_dir("sweep-gpus");
  const std::string c = "'" + (dir / "c").string() + "'";
  setenv("KQ_FAKE_GPUS", "Fake GPU A,Fake GPU B", 1);
  auto r = run_kq("sweep specs/clamp.yaml specs/axpby.yaml --arms cpu_tbb --quick --out " + c);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("on GPU 0 (Fake GPU A)") != std::string::npos);
  CHECK(r.out.find("on GPU 1 (Fake GPU B)") != std::string::npos);
  const nlohmann::json merged = read_json(dir / "c" / "campaign.json");
  REQUIRE(merged["gpus"].size() == 2);
  CHECK(merged["gpus"][0]["tasks"] == 1);
  CHECK(merged["gpus"][1]["tasks"] == 1);
  // Each task's run saw the GPU its record names; the two ran at once.
  bool overlap = false;
  const auto& tasks = merged["tasks"];
  for (const auto& t : tasks) {
    const std::string gpu = t["record"]["gpu"];
    const nlohmann::json manifest =
        read_json(dir / "c" / t["run_dir"].get<std::string>() / "manifest.json");
    INFO(t["id"]);
    CHECK(manifest["machine"]["cuda_visible_devices"] == (gpu == "GPU 0 (Fake GPU A)" ? "0" : "1"));
    for (const auto& u : tasks)
      overlap =
          overlap || (u["record"]["gpu"] != gpu && t["record"]["started"] < u["record"]["ended"] &&
                      u["record"]["started"] < t["record"]["ended"]);
  }
  CHECK(overlap);
  // Side by side: the campaign's span is well under its tasks' time summed.
  CHECK(merged["span_s"].get<double>() > 0);
  CHECK(merged["span_s"].get<double>() < merged["task_wall_s"].get<double>());
  CHECK(read_file(dir / "c" / "campaign.md").find("GPU 1 (Fake GPU B): ") != std::string::npos);

  // One GPU of the two: the task on it.
  r = run_kq("sweep specs/clamp.yaml --arms cpu_tbb --quick --devices 1 --out '" +
             (dir / "one").string() + "'");
  CHECK(r.exit_code == 0);
  CHECK(read_json(dir / "one" / "runs" /
                  (read_json(dir / "one" / "plan.json")["tasks"][0]["id"].get<std::string>()) /
                  "manifest.json")["machine"]["cuda_visible_devices"] == "1");

  // What it cannot use, named.
  r = run_kq("sweep specs/clamp.yaml --devices 2 --out '" + (dir / "x").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no GPU 2; this machine sees 2: GPU 0 (Fake GPU A), GPU 1 (Fake GPU B)") !=
        std::string::npos);
  r = run_kq("sweep specs/clamp.yaml --devices 0,0 --out '" + (dir / "x").string() + "'");
  CHECK(r.out.find("GPU 0 named twice") != std::string::npos);
  r = run_kq("sweep specs/clamp.yaml --devices first --out '" + (dir / "x").string() + "'");
  CHECK(r.out.find("'first' is no GPU number") != std::string::npos);
  r = run_kq("sweep specs/clamp.yaml --slurm --devices 0 --out '" + (dir / "x").string() + "'");
  CHECK(r.out.find("--devices is for tasks run here") != std::string::npos);
  setenv("KQ_FAKE_GPUS", "", 1);
  r = run_kq("sweep specs/clamp.yaml --devices 0 --out '" + (dir / "x").string() + "'");
  CHECK(r.out.find("this machine sees no GPU") != std::string::npos);
  unsetenv("KQ_FAKE_GPUS");
  fs::remove_all(dir);
}
