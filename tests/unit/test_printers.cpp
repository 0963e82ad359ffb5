// Every printer renders the committed runs as it did before the summary was typed
// (tests/data/golden, written by tests/data/golden/regenerate.sh), and summary.json read back is
// the same RunSummary.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "report/printer.hpp"
#include "summary/summarize.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

struct GoldenRun {
  const char* name;
  const char* source;  // under the source tree
};

const GoldenRun kRuns[] = {
    {"h200-residual_relu", "runs/reference/h200-residual_relu"},
    {"h200-residual_relu-frameworks", "runs/reference/h200-residual_relu-frameworks"},
    {"h200-silu_mul-frameworks", "runs/reference/h200-silu_mul-frameworks"},
    {"h200-run", "tests/data/h200-run"},
};

std::string read_text(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << f);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The run copied where regenerate.sh copies it: the summary names its run directory.
fs::path golden_copy(const GoldenRun& g) {
  const fs::path dir = fs::path("/tmp/kq-golden") / g.name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  fs::copy(kq::test::source_dir() / g.source, dir, fs::copy_options::recursive);
  return dir;
}

// What regenerate.sh keeps of report.html: the decision, the verdict table, the timing tables.
std::string html_tables(const std::string& h) {
  auto between = [&](const std::string& a, const std::string& b) {
    const auto i = h.find(a);
    REQUIRE(i != std::string::npos);
    const auto j = h.find(b, i);
    REQUIRE(j != std::string::npos);
    return h.substr(i, j + b.size() - i);
  };
  std::string timing = between("<h2>Timing per size</h2>", "<footer>");
  timing.resize(timing.size() - std::string("<footer>").size());
  return between("<p class=\"decision\">", "</p>") + "\n" +
         between("<h2>Qualification</h2>", "</table>") + "\n" + timing;
}

}  // namespace

TEST_CASE("every printer renders the committed runs to the golden files") {
  const fs::path golden = kq::test::source_dir() / "tests" / "data" / "golden";
  for (const GoldenRun& g : kRuns) {
    INFO(g.name);
    const fs::path dir = golden_copy(g);
    const fs::path want = golden / g.name;
    const kq::RunData run = kq::read_run(dir);
    const kq::RunSummary s = kq::summarize(run);
    CHECK(nlohmann::json(s).dump(2) + "\n" == read_text(want / "summary.json"));
    CHECK(kq::markdown_printer()->print(s, run) == read_text(want / "report.md"));
    CHECK(kq::junit_printer()->print(s, run) == read_text(want / "junit.xml"));
    CHECK(html_tables(kq::html_printer()->print(s, run)) == read_text(want / "report-tables.html"));
    CHECK(kq::console_printer()->print(s, run) == read_text(want / "console.txt"));
    if (fs::exists(want / "rounds.csv"))
      CHECK(kq::rounds_csv_printer()->print(s, run) == read_text(want / "rounds.csv"));
    fs::remove_all(dir);
  }
}

TEST_CASE("summary.json written and read back is the same RunSummary") {
  for (const GoldenRun& g : kRuns) {
    INFO(g.name);
    const fs::path dir = golden_copy(g);
    const kq::Report report = kq::write_report(dir);
    const kq::RunSummary back = kq::read_summary(dir / "summary.json");
    CHECK(back == report.summary);
    CHECK(back.decision.sentence == report.summary.decision.sentence);
    CHECK(!back.arms.empty());
    // The files every printer writes are there.
    for (const auto& p : kq::file_printers()) CHECK(fs::exists(dir / p->file_name()));
    fs::remove_all(dir);
  }
}

TEST_CASE("a summary.json that is not one is an error naming the file") {
  const fs::path f = fs::temp_directory_path() / "kq-bad-summary.json";
  std::ofstream(f) << "[1, 2]";
  CHECK_THROWS_WITH(kq::read_summary(f), doctest::Contains("kq-bad-summary.json"));
  std::ofstream(f) << R"({"arms": 3})";
  CHECK_THROWS_WITH(kq::read_summary(f), doctest::Contains("kq-bad-summary.json"));
  fs::remove(f);
}

TEST_CASE("report.html shows each arm's artifacts as a count and key files, the rest folded") {
  const fs::path dir = golden_copy(kRuns[1]);
  // The artifacts stage's index of nvrtc_jit in the H200 run (the committed copy keeps none).
  const std::vector<std::string> files = {"identity.json",
                                          "kernel.cu",
                                          "kernel.cubin",
                                          "kernel.ptx",
                                          "kernel.sass",
                                          "notes.txt",
                                          "nvrtc_flags.txt",
                                          "precision_plan.txt",
                                          "ptxas.txt",
                                          "timing-kernel.cu",
                                          "timing-kernel.cubin",
                                          "timing-kernel.ptx",
                                          "timing-kernel.sass",
                                          "timing-notes.txt",
                                          "timing-nvrtc_flags.txt",
                                          "timing-precision_plan.txt",
                                          "timing-ptxas.txt"};
  nlohmann::json index = {{"sass", "cuobjdump"}, {"files", nlohmann::json::array()}};
  for (const auto& f : files) index["files"].push_back({{"name", f}});
  fs::create_directories(dir / "artifacts" / "nvrtc_jit");
  std::ofstream(dir / "artifacts" / "nvrtc_jit" / "index.json") << index.dump();
  const kq::RunData run = kq::read_run(dir);
  const std::string h = kq::html_printer()->print(kq::summarize(run), run);
  // nvrtc_jit compiled 17 files: the identity, its generated source, PTX, SASS and ptxas's report
  // are named, all 17 folded below them.
  CHECK(h.find("<td>nvrtc_jit</td><td>17 files: identity.json, kernel.cu, kernel.ptx, "
               "kernel.sass, ptxas.txt<details><summary>all 17</summary>") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cases that name their GPU are counted by GPU in the summary and the report") {
  const fs::path dir = golden_copy(kRuns[0]);
  // As kq run --devices 0,1 records them: each case record with the GPU that ran it.
  std::ifstream in(dir / "qualification.jsonl");
  std::string all, line;
  int n = 0;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("type", "") == "case") j["gpu"] = n++ % 2;
    all += j.dump() + "\n";
  }
  in.close();
  std::ofstream(dir / "qualification.jsonl") << all;
  REQUIRE(n > 2);
  const kq::RunData run = kq::read_run(dir);
  const kq::RunSummary s = kq::summarize(run);
  REQUIRE(s.gpu_loads.size() == 2);
  CHECK(s.gpu_loads[0].gpu == 0);
  CHECK(s.gpu_loads[0].cases + s.gpu_loads[1].cases == n);
  CHECK(s.gpu_loads[1].seconds > 0);
  CHECK(kq::markdown_printer()->print(s, run).find(
            "- qualification's cases by GPU: GPU 0: " + std::to_string(s.gpu_loads[0].cases) +
            " cases, ") != std::string::npos);
  const kq::Report report = kq::write_report(dir);
  CHECK(kq::read_summary(dir / "summary.json") == report.summary);
  fs::remove_all(dir);
}
