// The kq command line end to end on this machine: every subcommand, the exit codes, and a
// full run of the CPU arm on residual_relu that leaves a complete run directory.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "util/json_lines.hpp"

using kq::test::run_kq;
namespace fs = std::filesystem;

TEST_CASE("kq without a command prints usage and exits 2") {
  auto r = run_kq("");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("usage: kq <command>") != std::string::npos);
  CHECK(r.out.find("exit codes") != std::string::npos);
}

TEST_CASE("every subcommand has --help") {
  for (const char* c : {"list", "check-spec", "run", "report", "version"}) {
    auto r = run_kq(std::string(c) + " --help");
    INFO(c << ": " << r.out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("usage: kq") != std::string::npos);
  }
}

TEST_CASE("unknown command and bad options are usage errors") {
  CHECK(run_kq("frobnicate").exit_code == 2);
  auto r = run_kq("run specs/residual_relu.yaml --no-such-option");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no-such-option") != std::string::npos);
  r = run_kq("run specs/residual_relu.yaml --arms no_such_arm");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no arm named 'no_such_arm' (") != std::string::npos);  // nothing near it
  CHECK(r.out.find("`kq list` names them") != std::string::npos);
  CHECK(r.out.find("broken_cpu_crashes") == std::string::npos);  // not every name inline
  r = run_kq("qualify specs/residual_relu.yaml --arms cpu_tbb,cpu_tbv");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("no arm named 'cpu_tbv'; did you mean 'cpu_tbb'?") != std::string::npos);
  r = run_kq("run specs/residual_relu.yaml --sizes 12,abc --no-timing");
  CHECK(r.exit_code == 2);
  // An --out folder that holds something already is refused before any work, naming the option.
  const auto taken = kq::test::temp_dir("taken-out");
  std::ofstream(taken / "keep.txt") << "mine\n";
  r = run_kq("qualify specs/residual_relu.yaml --arms cpu_tbb --out " + taken.string());
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--out: run directory " + taken.string() + " exists and is not empty") !=
        std::string::npos);
  CHECK(kq::test::read_file(taken / "keep.txt") == "mine\n");
  r = run_kq("selftest --quick --out " + taken.string());
  CHECK(r.exit_code == 2);
  r = run_kq("qualify specs/residual_relu.yaml --hang-timeout -1");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--hang-timeout") != std::string::npos);
  r = run_kq("selftest --specs /nonexistent/kq-specs");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--specs: /nonexistent/kq-specs is not a folder") != std::string::npos);
  r = run_kq("qualify specs/residual_relu.yaml --jobs 0");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--jobs") != std::string::npos);
  r = run_kq("run specs/residual_relu.yaml --early-timing sometimes");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--early-timing: give 'on', 'off' or 'auto', not 'sometimes'") !=
        std::string::npos);
}

TEST_CASE("kq version names the commit") {
  auto r = run_kq("version");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("commit") != std::string::npos);
}

TEST_CASE("kq list finds the CPU arm") {
  auto r = run_kq("list");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("cpu_tbb") != std::string::npos);
}

TEST_CASE("a plugin's reported environment shows in kq list and in the run's manifest") {
  // tests/plugins/load_problems.cpp exports kq_plugin_environment.
  const fs::path plugin = fs::path(KQ_TEST_PLUGIN_DIR) / "problems" / "libkq_test_load_problems.so";
  const fs::path empty = kq::test::temp_dir("plugin-env-empty");
  auto r = run_kq("list --plugin-dir '" + empty.string() + "' --plugin '" + plugin.string() + "'");
  INFO(r.out);
  CHECK(r.out.find("plugin environment:\n  libkq_test_load_problems.so (" + plugin.string() +
                   ")\n    python: 3.12.3 (main, test build)\n    torch: absent\n    note: two "
                   "lines\n") != std::string::npos);

  auto dir = kq::test::temp_dir("plugin-env") / "run";
  r = run_kq("qualify '" + (kq::test::source_dir() / "tests/data/specs/copy.yaml").string() +
             "' --plugin '" + plugin.string() + "' --arms test_triple --quick --out " +
             dir.string());
  INFO(r.out);
  std::ifstream in(dir / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  CHECK(manifest["plugin_environment"] == nlohmann::json{{"libkq_test_load_problems.so",
                                                          {{"python", "3.12.3 (main, test build)"},
                                                           {"torch", "absent"},
                                                           {"note", "two lines"}}}});
  CHECK(kq::test::read_file(dir / "report.md")
            .find("- plugin libkq_test_load_problems.so: note two lines, python 3.12.3 (main, test "
                  "build), torch absent\n") != std::string::npos);
}

TEST_CASE("kq check-spec accepts every shipped spec and rejects a bad one with its position") {
  for (const auto& e : std::filesystem::directory_iterator(kq::test::source_dir() / "specs")) {
    if (e.path().extension() != ".yaml") continue;
    auto r = run_kq("check-spec " + e.path().string());
    INFO(e.path() << ": " << r.out);
    CHECK(r.exit_code == 0);
  }
  auto dir = kq::test::temp_dir("check-spec");
  std::ofstream(dir / "bad.yaml") << "kq_spec: 1\nop: x\nsemantic: relu(x)\n";
  auto r = run_kq("check-spec " + (dir / "bad.yaml").string());
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("bad.yaml:3:1") != std::string::npos);
}

TEST_CASE("kq run of the CPU arm on residual_relu writes a complete run directory") {
  auto dir = kq::test::temp_dir("run") / "run";
  auto r = run_kq("run specs/residual_relu.yaml --arms cpu_tbb --quick --sizes 4096,65536 --out " +
                  dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("cpu_tbb: qualified") != std::string::npos);

  auto manifest = nlohmann::json::parse(kq::test::read_file(dir / "manifest.json"));
  CHECK(manifest["op"] == "residual_relu");
  CHECK(manifest["spec_sha256"].get<std::string>().size() == 64);
  CHECK(manifest["kq"].contains("commit"));
  CHECK(manifest["kq"].contains("dirty"));
  CHECK(manifest["machine"].contains("hostname"));
  REQUIRE(manifest["arms"].size() == 1);
  CHECK(manifest["arms"][0]["name"] == "cpu_tbb");
  CHECK(manifest["arms"][0]["plugin_sha256"].get<std::string>().size() == 64);
  CHECK(!manifest["arms"][0]["sources"].empty());
  CHECK(kq::test::read_file(dir / "spec.yaml") ==
        kq::test::read_file(kq::test::source_dir() / "specs/residual_relu.yaml"));

  auto q = kq::read_json_lines(dir / "qualification.jsonl");
  int cases = 0, refused = 0;
  std::string verdict;
  std::set<std::string> timing_cases;
  for (const auto& j : q) {
    if (j["type"] == "case") {
      ++cases;
      if (j["group"] == "timing") timing_cases.insert(j["case"].get<std::string>());
      if (j["result"] == "refused") ++refused;
      if (j["in_contract"] == true) CHECK_MESSAGE(j["result"] == "passed", j.dump());
      if (j["in_contract"] == false) CHECK_MESSAGE(j["result"] == "refused", j.dump());
    }
    if (j["type"] == "verdict") verdict = j["verdict"];
  }
  CHECK(cases > 50);
  CHECK(refused > 5);  // strided, transposed, broadcast, aliasing, rank 5
  CHECK(verdict == "qualified");
  // The sizes timed (--sizes, not the spec's) were qualified.
  CHECK(timing_cases == std::set<std::string>{"timing/4096", "timing/65536"});

  auto rounds = kq::read_json_lines(dir / "rounds.jsonl");
  int samples = 0;
  for (const auto& j : rounds)
    if (j["type"] == "round") {
      ++samples;
      CHECK(j["seconds"].get<double>() > 0);
    }
  CHECK(samples >= 20);  // two sizes, at least min_rounds each

  auto report = kq::test::read_file(dir / "report.md");
  CHECK(report.find("## Qualification") != std::string::npos);
  CHECK(report.find("## Decision") != std::string::npos);
  // The spec's baselines before cpu_tbb did not run here: the report names them passed over,
  // and cpu_tbb, the last, is the baseline.
  CHECK(report.find("nvrtc_jit not among this run's arms") != std::string::npos);
  auto summary = nlohmann::json::parse(kq::test::read_file(dir / "summary.json"));
  CHECK(summary["baseline_choice"]["used"] == "cpu_tbb");
  CHECK(summary["decision"]["baseline_ran"] == true);

  // The arm's artifacts are indexed, each file with its SHA-256, identity.json among them.
  auto index = nlohmann::json::parse(kq::test::read_file(dir / "artifacts/cpu_tbb/index.json"));
  std::set<std::string> indexed;
  for (const auto& f : index["files"]) {
    CHECK(f["sha256"].get<std::string>().size() == 64);
    indexed.insert(f["name"].get<std::string>());
  }
  CHECK(indexed.count("identity.json") == 1);

  // The report can be rebuilt from the directory alone.
  std::filesystem::remove(dir / "report.md");
  CHECK(run_kq("report " + dir.string()).exit_code == 0);
  CHECK(std::filesystem::exists(dir / "report.md"));
}

TEST_CASE("a run directory cut short still reads back") {
  auto dir = kq::test::temp_dir("torn");
  {
    std::ofstream f(dir / "rounds.jsonl");
    f << R"({"type":"round","arm":"a","size":4096,"mode":"single","round":0,"seconds":1e-5})"
      << "\n";
    f << R"({"type":"round","arm":"a","size":40)";  // killed mid-line
  }
  auto lines = kq::read_json_lines(dir / "rounds.jsonl");
  CHECK(lines.size() == 1);
}

TEST_CASE("--twice times a second, independent instance of an arm beside the first") {
  auto dir = kq::test::temp_dir("twice") / "run";
  auto r = run_kq(
      "run specs/residual_relu.yaml --arms cpu_tbb --quick --sizes 4096 --twice cpu_tbb --out " +
      dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  int first = 0, second = 0;
  for (const auto& j : kq::read_json_lines(dir / "rounds.jsonl")) {
    if (j["type"] != "round") continue;
    if (j["arm"] == "cpu_tbb") ++first;
    if (j["arm"] == "cpu_tbb#2") ++second;
  }
  CHECK(first >= 10);
  CHECK(second == first);  // interleaved in the same rounds
}

TEST_CASE("--no-blocking-kernel reaches the timing worker") {
  auto dir = kq::test::temp_dir("no-blocking-kernel") / "run";
  auto r = run_kq(
      "run specs/residual_relu.yaml --arms cpu_tbb --quick --sizes 4096 --no-blocking-kernel "
      "--out " +
      dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("timing stopped early") == std::string::npos);
  int rounds = 0;
  for (const auto& j : kq::read_json_lines(dir / "rounds.jsonl"))
    if (j["type"] == "round") {
      ++rounds;
      CHECK_FALSE(j.contains("held"));  // a CPU sample is never held
    }
  CHECK(rounds >= 10);
}

TEST_CASE("an arm whose worker the OOM killer takes is not judged, and the run says why") {
  // tests/plugins/oom_killed.cpp: at 12345 elements the arm raises the count of OOM kills in
  // KQ_VMSTAT's file and takes a SIGKILL, as the kernel's OOM killer would.
  const fs::path tmp = kq::test::temp_dir("oom-killed");
  const fs::path dir = tmp / "run";
  const fs::path plugins = fs::path(KQ_TEST_PLUGIN_DIR) / "oom";
  auto r = run_kq("run '" + (kq::test::source_dir() / "tests/data/specs/copy.yaml").string() +
                      "' --plugin-dir '" + plugins.string() +
                      "' --quick --sizes 4096,12345 --no-timing --out " + dir.string(),
                  "KQ_VMSTAT='" + (tmp / "vmstat").string() + "'");
  INFO(r.out);
  CHECK(r.out.find("test_oom_killed: not run") != std::string::npos);
  CHECK(r.out.find("killed by the kernel's OOM killer") != std::string::npos);
  bool judged = false;
  for (const auto& j : kq::read_json_lines(dir / "qualification.jsonl"))
    if (j["type"] == "verdict" && j["arm"] == "test_oom_killed") {
      judged = true;
      CHECK(j["verdict"] == "not run");
      CHECK(j["check"] == "host_memory");
      CHECK(j["case"].get<std::string>().find("12345") != std::string::npos);
    }
  CHECK(judged);
}

TEST_CASE("a timing worker that dies ends the run with exit 1, keeping what was measured") {
  // tests/plugins/crash_when_timed.cpp: qualifies on tests/data/specs/copy.yaml (its case at
  // 12345 elements included), then aborts when timed at 12345 elements.
  auto dir = kq::test::temp_dir("timing-dies") / "run";
  const fs::path plugins = fs::path(KQ_TEST_PLUGIN_DIR) / "timing";
  auto r = run_kq("run '" + (kq::test::source_dir() / "tests/data/specs/copy.yaml").string() +
                  "' --plugin-dir '" + plugins.string() + "' --quick --sizes 4096,12345 --out " +
                  dir.string());
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("test_crash_when_timed: qualified") != std::string::npos);
  CHECK(r.out.find("timing stopped early") != std::string::npos);
  int timing_cases = 0;
  for (const auto& j : kq::read_json_lines(dir / "qualification.jsonl"))
    if (j["type"] == "case" && j["case"] == "timing/12345" && j["result"] == "passed")
      ++timing_cases;
  CHECK(timing_cases == 1);  // --sizes reached the qualification worker
  int rounds_4096 = 0;
  for (const auto& j : kq::read_json_lines(dir / "rounds.jsonl"))
    if (j["type"] == "round" && j["size"] == 4096) ++rounds_4096;
  CHECK(rounds_4096 >= 10);  // the size before the crash is kept
  // The decision says it stands on a timing cut short.
  CHECK(r.out.find("The timing stage stopped early (timing worker killed by signal 6") !=
        std::string::npos);
  CHECK(kq::test::read_file(dir / "report.md").find("The timing stage stopped early") !=
        std::string::npos);
}

TEST_CASE("--jobs qualifies arms side by side with the same verdicts, in the arms' order") {
  const std::string arms =
      "cpu_tbb,broken_cpu_tail_skipped,broken_cpu_hangs,broken_cpu_crashes,broken_cpu_no_relu";
  std::map<std::string, std::string> verdicts[2];
  std::vector<std::string> order[2];
  int k = 0;
  for (const char* jobs : {"1", "4"}) {
    auto dir = kq::test::temp_dir(std::string("jobs") + jobs) / "run";
    auto r = run_kq("qualify specs/residual_relu.yaml --quick --hang-timeout 5 --jobs " +
                    std::string(jobs) + " --arms " + arms + " --junit " +
                    (dir.parent_path() / "j.xml").string() + " --out " + dir.string());
    INFO(r.out);
    CHECK(r.exit_code == 1);  // the broken candidates are rejected: a candidate failed
    for (const auto& j : kq::read_json_lines(dir / "qualification.jsonl"))
      if (j["type"] == "verdict")
        verdicts[k][j["arm"]] = j.value("verdict", "") + "/" + j.value("check", "");
    auto s = nlohmann::json::parse(kq::test::read_file(dir / "summary.json"));
    for (const auto& a : s["arms"]) order[k].push_back(a["name"]);
    ++k;
  }
  CHECK(verdicts[0].size() == 5);
  CHECK(verdicts[0] == verdicts[1]);
  CHECK(verdicts[1]["cpu_tbb"] == "qualified/");
  CHECK(verdicts[1]["broken_cpu_hangs"] == "hung/hang");
  CHECK(order[0] == order[1]);
}

TEST_CASE("cases are computed once for several workers, and in the worker for one") {
  for (const std::string arms : {"cpu_tbb", "cpu_tbb,broken_cpu_no_relu"}) {
    CAPTURE(arms);
    const bool one = arms.find(',') == std::string::npos;
    auto dir = kq::test::temp_dir("share-" + std::to_string(one ? 1 : 2)) / "run";
    auto r = run_kq("qualify specs/residual_relu.yaml --quick --arms " + arms + " --out " +
                    dir.string());
    INFO(r.out);
    CHECK(r.exit_code == (one ? 0 : 1));
    CHECK((r.out.find("one worker: it computes its cases' inputs and references itself") !=
           std::string::npos) == one);
    CHECK((r.out.find("computed once for every arm") != std::string::npos) == !one);
    CHECK(fs::exists(dir / "logs" / "shared-cases.log") == !one);
    // The same verdict either way.
    for (const auto& j : kq::read_json_lines(dir / "qualification.jsonl"))
      if (j["type"] == "verdict" && j["arm"] == "cpu_tbb") CHECK(j["verdict"] == "qualified");
  }
}

TEST_CASE("an interrupted run takes its workers with it") {
  // broken_cpu_hangs spins in run() for ever; kq is stopped (SIGTERM: a background job of a
  // script ignores SIGINT) while its worker hangs.
  const auto dir = kq::test::temp_dir("interrupt") / "run";
  const std::string cmd = "cd '" + kq::test::source_dir().string() + "' && ('" +
                          kq::test::kq_binary().string() +
                          "' qualify specs/residual_relu.yaml --arms broken_cpu_hangs --quick "
                          "--hang-timeout 120 --out '" +
                          dir.string() +
                          "' >/dev/null 2>&1 & P=$!; sleep 3; kill -TERM $P; wait $P; echo "
                          "exit=$?; sleep 1; pgrep -af -- '[_]_worker-qualify --spec " +
                          dir.string() + "' || echo 'no workers left')";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  INFO(out);
  CHECK(out.find("exit=143") != std::string::npos);  // killed by SIGTERM
  CHECK(out.find("no workers left") != std::string::npos);
  // What was measured before the interrupt is on disk.
  CHECK(std::filesystem::exists(dir / "qualification.jsonl"));
}

TEST_CASE("output that is not a terminal gets a line naming what still runs after a silence") {
  // broken_cpu_hangs is silent in one case until its 3 s hang timeout; with a heartbeat of
  // 400 ms the log names it and its case meanwhile (kq's default heartbeat is 10 s).
  const auto dir = kq::test::temp_dir("heartbeat") / "run";
  ::setenv("KQ_HEARTBEAT_MS", "400", 1);
  auto r = run_kq(
      "qualify specs/residual_relu.yaml --quick --hang-timeout 3 --arms "
      "broken_cpu_hangs --out " +
      dir.string());
  ::unsetenv("KQ_HEARTBEAT_MS");
  INFO(r.out);
  CHECK(r.out.find(" s in, still running: broken_cpu_hangs ") != std::string::npos);
  CHECK(r.out.find("broken_cpu_hangs: hung") != std::string::npos);
  CHECK(r.out.find("still running", r.out.find("broken_cpu_hangs: hung")) == std::string::npos);
}

TEST_CASE("each case's time is broken down by stage, in qualification.jsonl and the worker log") {
  const auto dir = kq::test::temp_dir("stages") / "run";
  auto r = run_kq("qualify specs/residual_relu.yaml --quick --arms cpu_tbb --out " + dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const char* stages[] = {"generate", "reference", "upload", "run", "download", "compare"};
  std::map<std::string, double> summed;
  int cases = 0;
  nlohmann::json verdict;
  double at = 0;  // the stage's timeline: every record stamped, in the order written
  for (const auto& j : kq::read_json_lines(dir / "qualification.jsonl")) {
    REQUIRE(j.contains("at_s"));
    CHECK(j["at_s"].get<double>() >= at);
    at = j["at_s"].get<double>();
    if (j["type"] == "verdict") verdict = j;
    if (j["type"] != "case") continue;
    ++cases;
    double parts = 0;
    for (const char* s : stages) {
      REQUIRE(j["stages"].contains(s));
      parts += j["stages"][s].get<double>();
      summed[s] += j["stages"][s].get<double>();
    }
    CHECK(parts <= j["seconds"].get<double>() + 1e-6);  // the stages lie inside the case
  }
  REQUIRE(cases > 0);
  for (const char* s : stages)
    CHECK(verdict["stages"][s].get<double>() == doctest::Approx(summed[s]));
  // The worker's log: one line per case, with the same stages.
  const std::string log = kq::test::read_file(dir / "logs" / "qualify-cpu_tbb.log");
  CHECK(log.find("case size/1048579: passed in ") != std::string::npos);
  CHECK(log.find("(generate ") != std::string::npos);
  int lines = 0;
  for (std::size_t at = log.find("\ncase "); at != std::string::npos;
       at = log.find("\ncase ", at + 1))
    ++lines;
  CHECK(lines + 1 == cases);
}

TEST_CASE("a half-precision run names its dtype and compute type in the manifest and reports") {
  const auto dir = kq::test::temp_dir("bf16-run") / "run";
  auto r = run_kq("run specs/residual_relu_bf16.yaml --arms cpu_tbb --quick --sizes 4096 --out " +
                  dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto manifest = nlohmann::json::parse(kq::test::read_file(dir / "manifest.json"));
  CHECK(manifest["spec"]["dtype"] == "bf16");
  CHECK(manifest["spec"]["compute"] == "f32");
  CHECK(manifest["spec"]["bytes_per_element"] == 6);  // two bf16 inputs and a bf16 output
  const auto summary = nlohmann::json::parse(kq::test::read_file(dir / "summary.json"));
  CHECK(summary["dtype"] == "bf16");
  CHECK(summary["arms"][0]["verdict"] == "qualified");
  CHECK(kq::test::read_file(dir / "report.md")
            .rfind("# kq run: residual_relu (bf16, computed in f32)\n", 0) == 0);
  CHECK(kq::test::read_file(dir / "report.html")
            .find("kq run: residual_relu (bf16, computed in f32)</h1>") != std::string::npos);
}
