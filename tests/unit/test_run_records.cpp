// The schema and its one reader (record/records.hpp, record/run_data.hpp), and the printers of
// the summary, on the committed H200 runs and on small runs written here.
#include <doctest/doctest.h>

#include <fstream>

#include "record/run_data.hpp"
#include "report/compare.hpp"
#include "report/printer.hpp"
#include "summary/summarize.hpp"
#include "test_support.hpp"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kReference = kq::test::source_dir() / "runs" / "reference" / "h200-residual_relu";
const fs::path kFirstRun = kq::test::source_dir() / "tests" / "data" / "h200-run";

// What a printer prints of a run, from its own summary.
std::string printed(const std::unique_ptr<kq::Printer>& p, const kq::RunData& run) {
  return p->print(kq::summarize(run), run);
}
std::string printed(const std::unique_ptr<kq::Printer>& p, const fs::path& dir) {
  return printed(p, kq::read_run(dir));
}

json read_json(const fs::path& f) {
  std::ifstream in(f);
  return json::parse(in);
}

// A run directory with a manifest naming `arms` ("name:device") and the given record lines.
fs::path write_run(const std::string& name, const std::vector<std::string>& arms,
                   const std::string& qualification, const std::string& rounds) {
  const fs::path dir = fs::temp_directory_path() / ("kq-records-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  json list = json::array();
  for (const auto& a : arms)
    list.push_back({{"name", a.substr(0, a.find(':'))},
                    {"family", "test"},
                    {"device", a.substr(a.find(':') + 1)},
                    {"expected_rejection", ""}});
  std::ofstream(dir / "manifest.json")
      << json{{"op", "residual_relu"},
              {"arms", list},
              {"spec", {{"baseline", "base"}, {"bytes_per_element", 12.0}}}}
             .dump();
  std::ofstream(dir / "qualification.jsonl") << qualification;
  std::ofstream(dir / "rounds.jsonl") << rounds;
  return dir;
}

std::string round_line(const std::string& arm, int round, double seconds, double mhz,
                       bool held = true) {
  return json{{"type", "round"}, {"arm", arm},         {"size", 4096}, {"mode", "single"},
              {"round", round},  {"seconds", seconds}, {"held", held}, {"sm_clock_mhz", mhz}}
             .dump() +
         "\n";
}

}  // namespace

TEST_CASE("every record type reads back as it was written") {
  kq::rec::RoundSample r;
  r.arm = "a";
  r.size = 65536;
  r.round = 3;
  r.seconds = 1.5e-6;
  r.held = false;
  r.host_seconds = 2e-6;
  r.checked = true;
  const json j = r;
  CHECK(j["type"] == "round");
  CHECK(j["mode"] == "single");
  CHECK(!j.contains("sm_clock_mhz"));  // absent stays absent
  CHECK(!j.contains("launches"));
  const auto back = j.get<kq::rec::RoundSample>();
  CHECK(back.held == false);
  CHECK(back.host_seconds == 2e-6);
  CHECK(back.checked == true);
  CHECK(json(back) == j);

  kq::rec::VerdictRecord v;
  v.arm = "a";
  v.verdict = kq::rec::Verdict::not_run;
  v.counts = kq::rec::CaseCounts{1, 2, 3, 4, 10};
  CHECK(json(v)["verdict"] == "not run");
  CHECK(json(v).get<kq::rec::VerdictRecord>().counts->total == 10);
  CHECK_THROWS_WITH_AS(kq::rec::parse_verdict("fine"), "unknown verdict \"fine\"",
                       std::invalid_argument);

  kq::rec::Profile p{"a", 4096, {{"kernels", 2}, {"list", json::array()}}};
  const json pj = p;
  CHECK(pj["kernels"] == 2);
  CHECK(pj["arm"] == "a");
  CHECK(pj.get<kq::rec::Profile>().body == p.body);
}

TEST_CASE("the committed runs read, written before the schema version: version 1") {
  const kq::RunData ref = kq::read_run(kReference);
  CHECK(ref.problems.empty());
  CHECK(ref.manifest.schema_version == 1);
  CHECK(ref.manifest.arms.size() == 22);
  CHECK(ref.verdicts.size() == 22);
  CHECK(ref.cases.size() == 759);
  CHECK(ref.rounds.size() + ref.light_samples.size() + ref.size_starts.size() +
            ref.size_ends.size() + ref.rechecks.size() + ref.profiles.size() ==
        10853);
  CHECK(ref.usual_clock_mhz == doctest::Approx(1981.3).epsilon(0.001));
  CHECK(ref.light.size() == 5);

  const kq::RunData first = kq::read_run(kFirstRun);
  CHECK(first.problems.empty());
  CHECK(first.light.empty());
  CHECK(first.usual_clock_mhz == 0);
}

TEST_CASE("the reference run's summary is the one computed before the schema change") {
  // tests/data/h200-reference-summary.json: `kq report` of runs/reference/h200-residual_relu by
  // kq a38fe8b, before record/ existed. Only the schema version and the directory may differ,
  // and what later features add: the baseline choice (an ordered list of baselines, issue 12),
  // the dtype (issue 13).
  json before =
      read_json(kq::test::source_dir() / "tests" / "data" / "h200-reference-summary.json");
  json now = kq::summarize_run(kReference);
  CHECK(now["schema_version"] == kq::rec::kSchemaVersion);
  CHECK(now["baseline_choice"] ==
        json{{"list", {"nvrtc_jit"}}, {"used", "nvrtc_jit"}, {"passed_over", json::array()}});
  for (json* s : {&before, &now})
    for (const char* added : {"schema_version", "run_dir", "baseline_choice", "dtype"})
      s->erase(added);
  CHECK(now["headline"]["in_contract_cases_skipped"] == 0);  // issue 14
  now["headline"].erase("in_contract_cases_skipped");
  CHECK(now == before);
}

TEST_CASE("skipped cases are left out of the headline's counts and said beside them") {
  auto case_line = [](const std::string& c, const std::string& result) {
    return json{{"type", "case"},   {"arm", "base"},       {"case", c},     {"group", "size"},
                {"result", result}, {"in_contract", true}, {"seconds", 0.1}}
               .dump() +
           "\n";
  };
  const fs::path dir =
      write_run("skipped", {"base:cuda"},
                case_line("size/1", "passed") + case_line("size/2147483653", "skipped"), "");
  const json s = kq::summarize_run(dir);
  CHECK(s["headline"]["in_contract_cases"] == 1);
  CHECK(s["headline"]["in_contract_cases_passed"] == 1);
  CHECK(s["headline"]["in_contract_cases_skipped"] == 1);
  const std::string md = printed(kq::markdown_printer(), dir);
  CHECK(md.find("in-contract cases passed (1 more skipped: see the arms' rows)") !=
        std::string::npos);
}

TEST_CASE("compare and the summary count the same samples of the committed H200 run") {
  const json s = kq::summarize_run(kReference);
  const kq::RunComparison c = kq::compare_runs(kReference, kReference);
  std::map<std::pair<std::string, std::int64_t>, int> compared;
  for (const auto& t : c.timing)
    if (t.key.mode == "single") compared[{t.key.arm, t.key.size}] = t.n_a;
  int rows = 0;
  for (const auto& row : s["timing"])
    for (const auto& a : row["arms"]) {
      ++rows;
      CHECK(compared[{a["arm"], row["size"]}] == a["n"].get<int>());
    }
  CHECK(rows == static_cast<int>(compared.size()));
  CHECK(rows == 60);
  CHECK(!c.changed());
}

TEST_CASE("the sample rules are applied once: throttled and unheld samples are left out") {
  std::string rounds;
  for (int i = 0; i < 8; ++i) rounds += round_line("base", i, 1e-5, 1980);
  rounds += round_line("base", 8, 9e-5, 1200);         // below 75% of the usual clock
  rounds += round_line("base", 9, 8e-5, 1980, false);  // its hold timed out
  const fs::path dir = write_run("rules", {"base:cuda"}, "", rounds);
  const kq::RunData run = kq::read_run(dir);
  CHECK(run.usual_clock_mhz == 1980);
  const auto& kept = run.samples.at({"base", 4096, "single"});
  CHECK(kept.seconds.size() == 8);
  CHECK(kept.left_out.at("throttled") == 1);
  CHECK(kept.left_out.at("unheld") == 1);
  CHECK(run.round_left_out[8] == kq::LeftOut::throttled);
  CHECK(run.round_left_out[9] == kq::LeftOut::unheld);

  // The summary, rounds.csv and compare see the same: 8 counted, 2 named.
  const json s = kq::summarize(run);
  CHECK(s["timing"][0]["arms"][0]["n"] == 8);
  CHECK(s["timing"][0]["arms"][0]["throttled"] == 1);
  CHECK(s["timing"][0]["arms"][0]["unheld"] == 1);
  const std::string csv = printed(kq::rounds_csv_printer(), run);
  CHECK(csv.find("left_out") != std::string::npos);
  CHECK(csv.find(",throttled") != std::string::npos);
  CHECK(csv.find(",unheld") != std::string::npos);
  const kq::RunComparison c = kq::compare_runs(dir, dir);
  REQUIRE(c.timing.size() == 1);
  CHECK(c.timing[0].n_a == 8);
  CHECK(c.left_out_a.at("throttled") == 1);
}

TEST_CASE("a line that cannot be read is named by file and line; a torn last line is not") {
  const std::string good = round_line("base", 0, 1e-5, 1980);
  const std::string rounds = good + "{not json\n" +
                             R"({"type":"round","arm":"base","size":"big","seconds":1})"
                             "\n" +
                             good + R"({"type":"round","arm":"ba)";
  const fs::path dir = write_run("torn", {"base:cuda"}, "", rounds);
  const kq::RunData run = kq::read_run(dir);
  REQUIRE(run.problems.size() == 2);
  CHECK(run.problems[0] == "rounds.jsonl line 2: not JSON");
  CHECK(run.problems[1].rfind("rounds.jsonl line 3: ", 0) == 0);
  CHECK(run.rounds.size() == 2);
  CHECK(kq::summarize(run).problems.size() == 2);
}

TEST_CASE("junit prints the summary's verdicts, the timing checks' rejections included") {
  const std::string qualification =
      R"({"type":"case","arm":"a","case":"size/1","group":"size","in_contract":true,"result":"passed","seconds":0.1})"
      "\n"
      R"({"type":"case","arm":"a","case":"size/2","group":"size","in_contract":true,"result":"failed","check":"values","message":"bad","seconds":0.1})"
      "\n"
      R"({"type":"verdict","arm":"a","verdict":"rejected","check":"values","case":"size/2","detail":"bad"})"
      "\n"
      R"({"type":"verdict","arm":"b","verdict":"qualified","pass":"memcheck"})"
      "\n"
      R"({"type":"verdict","arm":"b","verdict":"qualified"})"
      "\n";
  const std::string rounds =
      R"({"type":"timing_reject","arm":"b","size":4096,"mode":"single","round":3,"check":"timing_output","message":"wrong at 7"})"
      "\n";
  const fs::path dir = write_run("junit", {"a:cpu", "b:cpu", "c:cuda"}, qualification, rounds);
  const kq::RunData run = kq::read_run(dir);
  const json s = kq::summarize(run);
  CHECK(s["arms"][1]["verdict"] == "rejected");
  CHECK(s["arms"][1]["rejected_while_timed"] == true);
  const std::string xml = printed(kq::junit_printer(), run);
  CHECK(xml.find(R"(tests="5" failures="3" errors="0" skipped="1")") != std::string::npos);
  CHECK(xml.find(R"(<failure type="timing_output" message="rejected: wrong at 7"/>)") !=
        std::string::npos);
  CHECK(xml.find(R"(<skipped message="not run: "/>)") != std::string::npos);
}

TEST_CASE("junit of the committed H200 run: one suite per arm, every good arm passing") {
  const kq::RunData run = kq::read_run(kReference);
  const std::string xml = printed(kq::junit_printer(), run);
  int suites = 0;
  for (auto at = xml.find("<testsuite "); at != std::string::npos;
       at = xml.find("<testsuite ", at + 1))
    ++suites;
  CHECK(suites == 22);
  CHECK(xml.find(R"(tests="781" failures="0" errors="0" skipped="11")") != std::string::npos);
  CHECK(xml.find("<failure") == std::string::npos);
}

TEST_CASE("the baseline is the first of the spec's list that qualified and was timed") {
  std::string rounds;
  for (int i = 0; i < 12; ++i)
    rounds += round_line("base", i, 1e-5, 1980) + round_line("fast", i, 5e-6, 1980);
  const std::string qualification =
      R"({"type":"verdict","arm":"compiled","verdict":"rejected","check":"values"})"
      "\n"
      R"({"type":"verdict","arm":"base","verdict":"qualified"})"
      "\n"
      R"({"type":"verdict","arm":"fast","verdict":"qualified"})"
      "\n";
  const fs::path dir =
      write_run("baselines", {"compiled:cuda", "base:cuda", "fast:cuda"}, qualification, rounds);
  json m = read_json(dir / "manifest.json");
  m["spec"]["baselines"] = {"torch_compile", "compiled", "base"};
  std::ofstream(dir / "manifest.json") << m.dump();
  const json s = kq::summarize_run(dir);
  CHECK(s["baseline_choice"]["used"] == "base");
  REQUIRE(s["baseline_choice"]["passed_over"].size() == 2);
  CHECK(s["baseline_choice"]["passed_over"][0]["why"] == "not among this run's arms");
  CHECK(s["baseline_choice"]["passed_over"][1]["why"] == "not qualified (rejected)");
  CHECK(s["decision"]["baseline"] == "base");
  CHECK(s["timing"][0]["arms"][1]["speedup"].get<double>() == doctest::Approx(2.0).epsilon(0.02));
  const std::string sentence = s["decision"]["sentence"];
  CHECK(sentence.find("The baseline is base, the first of the spec's that was timed "
                      "(torch_compile not among this run's arms; compiled not qualified "
                      "(rejected)).") != std::string::npos);
}

TEST_CASE(
    "speed-ups against eager and the compiled baseline, side by side in summary and reports") {
  // fused: 1.70x over eager execution, 0.99x against the compiled baseline.
  std::string rounds;
  for (int i = 0; i < 12; ++i)
    rounds += round_line("torch_eager", i, 17.17e-6, 1980) +
              round_line("torch_compile", i, 10e-6, 1980) + round_line("fused", i, 10.1e-6, 1980);
  std::string qualification;
  for (const char* arm : {"torch_eager", "torch_compile", "fused"})
    qualification +=
        json{{"type", "verdict"}, {"arm", arm}, {"verdict", "qualified"}}.dump() + "\n";
  const fs::path dir = write_run("eager", {"torch_eager:cuda", "torch_compile:cuda", "fused:cuda"},
                                 qualification, rounds);
  json m = read_json(dir / "manifest.json");
  m["spec"]["baselines"] = {"torch_compile", "nvrtc_jit"};
  m["spec"]["eager"] = {"torch_eager"};
  std::ofstream(dir / "manifest.json") << m.dump();
  const kq::RunData run = kq::read_run(dir);
  const json s = kq::summarize(run);
  CHECK(s["eager_choice"] ==
        json{{"list", {"torch_eager"}}, {"used", "torch_eager"}, {"passed_over", json::array()}});
  CHECK(s["decision"]["eager"] == "torch_eager");
  std::map<std::string, json> cells;
  for (const auto& a : s["timing"][0]["arms"]) cells[a["arm"]] = a;
  CHECK(cells["fused"]["eager_speedup"].get<double>() == doctest::Approx(1.70).epsilon(0.001));
  CHECK(cells["fused"]["eager_speedup_lo"].get<double>() <= cells["fused"]["eager_speedup"]);
  CHECK(cells["fused"]["speedup"].get<double>() == doctest::Approx(0.99).epsilon(0.001));
  CHECK(cells["torch_compile"]["eager_speedup"].get<double>() ==
        doctest::Approx(1.717).epsilon(0.001));
  CHECK(!cells["torch_eager"].contains("eager_speedup"));
  const std::string sentence = s["decision"]["sentence"];
  CHECK(sentence ==
        "Keep torch_compile: no arm beats it by 1.03x or more beyond noise at any timed size. The "
        "best candidate, fused, is 1.70x over eager (torch_eager) but 0.99x against "
        "torch_compile.");

  // report.md and report.html print both columns side by side, through report/columns.hpp.
  const std::string md = printed(kq::markdown_printer(), run);
  CHECK(md.find("| speed-up vs eager (95% CI) | speed-up vs baseline (95% CI) |") !=
        std::string::npos);
  CHECK(md.find("| fused |") != std::string::npos);
  CHECK(md.find("| 1.70x (1.70\u20131.70) | 0.99x (0.99\u20130.99) |") != std::string::npos);
  CHECK(md.find("against eager execution (torch_eager) and against the compiled baseline "
                "(torch_compile)") != std::string::npos);
  CHECK(md.find(sentence) != std::string::npos);
  const std::string html = printed(kq::html_printer(), run);
  CHECK(html.find("<th>speed-up vs eager (95% CI)</th><th>speed-up vs baseline (95% CI)</th>") !=
        std::string::npos);

  // An eager arm that did not run: no column, and the sentence says why there is no speed-up.
  m["spec"]["eager"] = {"numpy_eager", "torch_eager_v2"};
  std::ofstream(dir / "manifest.json") << m.dump();
  const json missing = kq::summarize_run(dir);
  CHECK(missing["eager_choice"]["used"] == "");
  for (const auto& a : missing["timing"][0]["arms"]) CHECK(!a.contains("eager_speedup"));
  CHECK(missing["decision"]["sentence"].get<std::string>().find(
            "No speed-up against eager: none of the spec's eager arms was timed (numpy_eager not "
            "among this run's arms; torch_eager_v2 not among this run's arms).") !=
        std::string::npos);
  CHECK(printed(kq::markdown_printer(), dir).find("speed-up vs eager") == std::string::npos);
}

TEST_CASE("the plugins' environment reaches the summary and report.md; runs without it read") {
  const fs::path dir =
      write_run("plugin-env", {"base:cuda"}, "", round_line("base", 0, 1e-5, 1980));
  json m = read_json(dir / "manifest.json");
  m["plugin_environment"] = {
      {"libkq_python.so",
       {{"python", "3.12.3 (main)"}, {"torch", "2.11.0+cu130"}, {"triton", "absent"}}}};
  std::ofstream(dir / "manifest.json") << m.dump();
  const json s = kq::summarize_run(dir);
  CHECK(s["plugin_environment"]["libkq_python.so"]["torch"] == "2.11.0+cu130");
  const std::string md = printed(kq::markdown_printer(), dir);
  CHECK(md.find("- plugin libkq_python.so: python 3.12.3 (main), torch 2.11.0+cu130, triton "
                "absent\n") != std::string::npos);
  const kq::RunData run = kq::read_run(dir);
  CHECK(printed(kq::html_printer(), run)
            .find("<li>plugin libkq_python.so: python 3.12.3 (main), torch 2.11.0+cu130, triton "
                  "absent</li>") != std::string::npos);
  CHECK(kq::summarize_run(kReference).plugin_environment.empty());
}
