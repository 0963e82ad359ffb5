// report.html and rounds.csv from a fixed H200 run, tests/data/h200-run (the first reference run,
// kept as test data; copied to a temp dir, never modified): `kq report DIR` writes them; the page
// carries Chart.js and the data inline; headless Chromium renders it with no network and the page's
// script reports every plot drawn
// (#kq-plots-ready in the dumped DOM); a screenshot of the page is a real picture. Chromium is
// required: `make test` installs it (tools/install-deps.sh --test), so its absence fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "test_support.hpp"
#include "util/json_lines.hpp"

namespace {

namespace fs = std::filesystem;
using kq::test::read_file;
using kq::test::run_kq;
using nlohmann::json;

const fs::path kReference = kq::test::source_dir() / "tests" / "data" / "h200-run";

fs::path copy_reference(const std::string& name) {
  auto dir = kq::test::temp_dir(name) / "run";
  fs::copy(kReference, dir, fs::copy_options::recursive);
  return dir;
}

// Runs `kq report` on a run directory, which must succeed, and returns its summary.json.
json report_summary(const fs::path& dir) {
  auto r = run_kq("report '" + dir.string() + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  return json::parse(read_file(dir / "summary.json"));
}

std::string chromium() {
  const char* env = std::getenv("KQ_CHROMIUM");
  return env && *env ? env : "/usr/bin/chromium";
}

struct Shell {
  int exit_code = -1;
  std::string out;
};

Shell shell(const std::string& cmd) {
  Shell r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Headless Chromium on a local file with no network: a fresh profile each time, virtual time so
// that the page's script has run before the DOM is dumped or the screenshot taken.
Shell run_chromium(const fs::path& html, const fs::path& work, const std::string& what) {
  static int n = 0;
  const fs::path profile = work / ("chromium-profile-" + std::to_string(++n));
  fs::create_directories(profile);
  const std::string cmd =
      "timeout 180 '" + chromium() +
      "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update "
      "--disable-sync --disable-dev-shm-usage --hide-scrollbars "
      "--user-data-dir='" +
      profile.string() + "' --virtual-time-budget=5000 --window-size=1400,6400 " + what +
      " 'file://" + fs::absolute(html).string() + "' 2>>'" + (work / "chromium.log").string() + "'";
  return shell(cmd);
}

void require_chromium() {
  if (!fs::exists(chromium()))
    FAIL("Chromium is not installed (" << chromium()
                                       << "): this test renders report.html in headless Chromium. "
                                          "`make test` installs it (tools/install-deps.sh --test "
                                          "installs Debian's chromium package); or set "
                                          "KQ_CHROMIUM to a Chromium binary.");
}

// The marker element the page's script appends once every plot is drawn.
std::string plots_marker(const std::string& dom) {
  std::smatch m;
  if (std::regex_search(dom, m, std::regex("<div id=\"kq-plots-ready\"[^>]*>"))) return m.str();
  return "";
}

// Renders the page: the DOM must hold the marker with `plots` plots and no error; the
// screenshot must be a PNG of real size. Returns the screenshot's path.
fs::path check_rendered(const fs::path& html, int plots) {
  const fs::path work = html.parent_path().parent_path();
  Shell dom = run_chromium(html, work, "--dump-dom");
  INFO("chromium log: " << read_file(work / "chromium.log"));
  REQUIRE(dom.exit_code == 0);
  CHECK(dom.out.find("id=\"kq-plots-error\"") == std::string::npos);
  const std::string marker = plots_marker(dom.out);
  INFO("marker: " << marker);
  CHECK(!marker.empty());
  CHECK(marker.find("data-count=\"" + std::to_string(plots) + "\"") != std::string::npos);
  CHECK(dom.out.find("<canvas") != std::string::npos);

  const fs::path png = work / (html.stem().string() + ".png");
  fs::remove(png);
  Shell shot = run_chromium(html, work, "--screenshot='" + png.string() + "'");
  REQUIRE(shot.exit_code == 0);
  REQUIRE(fs::exists(png));
  const std::string bytes = read_file(png);
  CHECK(bytes.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  // A blank 1400x6400 page compresses to a few kB; tables and nine-colour plots do not.
  CHECK(bytes.size() > 100000);
  MESSAGE("screenshot: " << png.string() << " (" << bytes.size() << " bytes)");
  return png;
}

}  // namespace

TEST_CASE("kq report writes a self-contained report.html with Chart.js and the data inline") {
  require_chromium();
  const auto dir = copy_reference("report-html");
  auto r = run_kq("report '" + dir.string() + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("report.html") != std::string::npos);
  REQUIRE(fs::exists(dir / "report.html"));
  const std::string html = read_file(dir / "report.html");

  // Chart.js embedded whole (the Debian file, byte for byte, when it is where the build found it).
  CHECK(html.find("Chart.js v") != std::string::npos);
  CHECK(html.size() > 150000);
  const fs::path debian = "/usr/share/javascript/chart.js/chart.min.js";
  if (fs::exists(debian)) CHECK(html.find(read_file(debian)) != std::string::npos);
  // Nothing fetched from elsewhere.
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);

  // The data: summary.json and the rounds, as JSON, and the tables of report.md.
  CHECK(html.find("id=\"kq-summary\"") != std::string::npos);
  CHECK(html.find("id=\"kq-rounds\"") != std::string::npos);
  CHECK(html.find("\"seconds\":7.74399982765317e-06") != std::string::npos);
  CHECK(html.find("cuda_fused_residual_relu_v4x2_b1024") != std::string::npos);
  CHECK(html.find("Adopt cuda_fused_residual_relu_v4_b256") != std::string::npos);
  CHECK(html.find("<th>speed-up vs baseline (95% CI)</th>") != std::string::npos);
  for (const char* plot : {"time", "light", "rounds", "speedup"})
    CHECK(html.find(std::string("data-plot=\"") + plot + "\"") != std::string::npos);
  // The reference run did not measure the light: GB/s instead, and the page says so.
  CHECK(html.find("The speed of light was not measured in this run") != std::string::npos);
  const json summary = json::parse(read_file(dir / "summary.json"));
  CHECK(summary["light"]["measured"] == false);

  // rounds.csv: a header and one line per round record.
  const std::string csv = read_file(dir / "rounds.csv");
  CHECK(csv.rfind("arm,size,mode,round,seconds\n", 0) == 0);
  int round_records = 0;
  for (const auto& rec : kq::read_json_lines(dir / "rounds.jsonl"))
    round_records += rec.value("type", "") == "round";
  CHECK(round_records > 400);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == round_records + 1);
  CHECK(csv.find("\nnvrtc_jit,1048576,single,0,7.74399982765317e-06\n") != std::string::npos);

  check_rendered(dir / "report.html", 4);
}

TEST_CASE("with light records the page plots % of the speed of light") {
  require_chromium();
  const auto dir = copy_reference("report-html-light");
  // A synthetic device-to-device copy per size: 8 bytes moved per element (a float read and
  // written), 4.6 TB/s plus 2 us of latency.
  {
    std::ofstream out(dir / "rounds.jsonl", std::ios::app);
    for (std::int64_t size : {1048576LL, 16777216LL, 268435456LL})
      for (int k = 0; k < 5; ++k) {
        const double bytes = 8.0 * static_cast<double>(size);
        out << json{{"type", "light"},
                    {"size", size},
                    {"seconds", bytes / 4.6e12 * (1 + 0.01 * k) + 2e-6},
                    {"bytes", bytes}}
                   .dump()
            << "\n";
      }
  }
  const json summary = report_summary(dir);
  CHECK(summary["light"]["measured"] == true);
  CHECK(summary["light"]["per_size"].size() == 3);
  for (const auto& row : summary["timing"]) {
    CHECK(row.contains("light_gbps"));
    for (const auto& a : row["arms"]) {
      REQUIRE(a.contains("pct_light"));
      CHECK(a["pct_light"].get<double>() > 10);
      CHECK(a["pct_light"].get<double>() < 150);
    }
  }
  const std::string html = read_file(dir / "report.html");
  CHECK(html.find("% of the speed of light per arm and size") != std::string::npos);
  CHECK(html.find("The speed of light was not measured") == std::string::npos);
  CHECK(read_file(dir / "report.md").find("% of light") != std::string::npos);
  // Light records are not rounds.
  CHECK(read_file(dir / "rounds.csv").find("light") == std::string::npos);

  check_rendered(dir / "report.html", 4);
}

TEST_CASE("a CPU arm is timed beside the CUDA arms but is no candidate against them") {
  const auto dir = copy_reference("report-cpu-arm");
  // cpu_tbb, on host memory, "faster" than every CUDA arm at 2^20; CUPTI left attached after
  // 2^20's profile.
  {
    json manifest = json::parse(read_file(dir / "manifest.json"));
    manifest["arms"].push_back({{"name", "cpu_tbb"}, {"family", "cpu"}, {"device", "cpu"}});
    std::ofstream(dir / "manifest.json") << manifest.dump(2);
    std::ofstream out(dir / "rounds.jsonl", std::ios::app);
    for (int k = 0; k < 30; ++k) {
      out << json{{"type", "round"},  {"arm", "cpu_tbb"}, {"size", 1048576},
                  {"mode", "single"}, {"round", k},       {"seconds", 1e-6 * (1 + 0.01 * k)}}
                 .dump()
          << "\n";
      out << json{{"type", "light"}, {"size", 1048576}, {"seconds", 4e-6}, {"bytes", 8388608}}
                 .dump()
          << "\n";
    }
    out << json{{"type", "profiler_attached"}, {"size", 1048576}, {"reason", "synthetic"}}.dump()
        << "\n";
  }
  const json summary = report_summary(dir);
  bool seen = false;
  for (const auto& row : summary["timing"]) {
    CHECK(row.contains("cupti_attached") == (row["size"] != 1048576));
    for (const auto& a : row["arms"]) {
      if (a["arm"] != "cpu_tbb") continue;
      seen = true;
      CHECK_FALSE(a.contains("pct_light"));  // the light is a device copy
      CHECK_FALSE(a.contains("speedup"));
    }
  }
  CHECK(seen);
  const json& d = summary["decision"];
  REQUIRE(d["other_device"].size() == 1);
  CHECK(d["other_device"][0]["arm"] == "cpu_tbb");
  for (const auto& w : d["ranges"]) CHECK(w["arm"] != "cpu_tbb");
  CHECK(d["sentence"].get<std::string>().find("cpu_tbb on cpu") != std::string::npos);
  CHECK(read_file(dir / "report.md").find("CUPTI stayed attached from a smaller size's profile") !=
        std::string::npos);
  // cpu_tbb has no verdict in qualification.jsonl (as in a run stopped early): JUnit says so.
  CHECK(read_file(dir / "junit.xml").find("<skipped message=\"not run: \"/>") != std::string::npos);

  // Every round of a CPU arm and of the CUDA arms: never one axis for both (a CPU arm takes
  // hundreds of microseconds where a CUDA arm takes a few), so each device has its own panel.
  if (fs::exists(chromium())) {
    check_rendered(dir / "report.html", 4);
    const Shell dom = run_chromium(dir / "report.html", dir.parent_path(), "--dump-dom");
    CHECK(dom.out.find("single launches, cpu arms: 30 rounds per arm") != std::string::npos);
    CHECK(dom.out.find("single launches, cuda arms:") != std::string::npos);
  } else {
    MESSAGE("chromium not found: the rounds panels per device are not rendered");
  }
}

TEST_CASE("arms that decline the spec are listed once per reason, not as verdict rows") {
  const auto dir = copy_reference("report-declined");
  {
    json manifest = json::parse(read_file(dir / "manifest.json"));
    std::ofstream q(dir / "qualification.jsonl", std::ios::app);
    for (const char* name : {"decl_a", "decl_b", "decl_c"}) {
      manifest["arms"].push_back({{"name", name}, {"family", "x"}, {"device", "cuda"}});
      const std::string why = name == std::string("decl_c") ? "no functor for silu" : "not relu";
      q << json{{"type", "verdict"}, {"arm", name}, {"verdict", "unsupported"}, {"detail", why}}
               .dump()
        << "\n";
    }
    std::ofstream(dir / "manifest.json") << manifest.dump(2);
  }
  const json summary = report_summary(dir);
  REQUIRE(summary["declined"].size() == 2);
  CHECK(summary["declined"][0]["reason"] == "no functor for silu");
  CHECK(summary["declined"][0]["arms"] == json::array({"decl_c"}));
  CHECK(summary["declined"][1]["reason"] == "not relu");
  CHECK(summary["declined"][1]["arms"] == json::array({"decl_a", "decl_b"}));
  const std::string md = read_file(dir / "report.md");
  CHECK(md.find("- decl_a, decl_b: not relu") != std::string::npos);
  CHECK(md.find("| decl_a |") == std::string::npos);
  const std::string html = read_file(dir / "report.html");
  CHECK(html.find("<li>decl_a, decl_b: not relu</li>") != std::string::npos);
  CHECK(html.find("<td>decl_a</td>") == std::string::npos);
}

TEST_CASE("arms skipped for want of a device are listed once per reason, not as verdict rows") {
  const auto dir = copy_reference("report-skipped");
  {
    json manifest = json::parse(read_file(dir / "manifest.json"));
    std::ofstream q(dir / "qualification.jsonl", std::ios::app);
    for (const char* name : {"gpu_a", "gpu_b", "gpu_c"}) {
      manifest["arms"].push_back({{"name", name}, {"family", "x"}, {"device", "cuda"}});
      const std::string why = name == std::string("gpu_c") ? "another reason" : "no CUDA device";
      q << json{{"type", "verdict"}, {"arm", name}, {"verdict", "skipped"}, {"detail", why}}.dump()
        << "\n";
    }
    std::ofstream(dir / "manifest.json") << manifest.dump(2);
  }
  const json summary = report_summary(dir);
  REQUIRE(summary["skipped"].size() == 2);
  CHECK(summary["skipped"][0]["reason"] == "another reason");
  CHECK(summary["skipped"][0]["arms"] == json::array({"gpu_c"}));
  CHECK(summary["skipped"][1]["reason"] == "no CUDA device");
  CHECK(summary["skipped"][1]["arms"] == json::array({"gpu_a", "gpu_b"}));
  const std::string md = read_file(dir / "report.md");
  CHECK(
      md.find(
          "Skipped on this machine:\n\n- gpu_c: another reason\n- gpu_a, gpu_b: no CUDA device") !=
      std::string::npos);
  CHECK(md.find("| gpu_a |") == std::string::npos);
  const std::string html = read_file(dir / "report.html");
  CHECK(html.find("<li>gpu_a, gpu_b: no CUDA device</li>") != std::string::npos);
  CHECK(html.find("<td>gpu_a</td>") == std::string::npos);
}

TEST_CASE("samples whose hold timed out are kept in rounds.jsonl but left out, and notes shown") {
  const auto dir = copy_reference("report-unheld");
  const std::int64_t size = 1048576;
  std::size_t before = 0;
  {
    const json summary = json::parse(read_file(dir / "summary.json"));
    for (const auto& row : summary["timing"])
      if (row["size"] == size)
        for (const auto& a : row["arms"])
          if (a["arm"] == "nvrtc_jit") before = a["n"].get<std::size_t>();
  }
  REQUIRE(before > 0);
  {
    std::ofstream out(dir / "rounds.jsonl", std::ios::app);
    for (int k = 0; k < 3; ++k)
      out << json{{"type", "round"},  {"arm", "nvrtc_jit"}, {"size", size}, {"mode", "single"},
                  {"round", 900 + k}, {"seconds", 1.0},     {"held", false}}
                 .dump()
          << "\n";
    out << json{{"type", "arm_note"},
                {"arm", "cudnn_pointwise"},
                {"size", size},
                {"note", "timed without the blocking kernel"}}
               .dump()
        << "\n";
  }
  const json summary = report_summary(dir);
  bool seen = false;
  for (const auto& row : summary["timing"])
    for (const auto& a : row["arms"])
      if (row["size"] == size && a["arm"] == "nvrtc_jit") {
        seen = true;
        CHECK(a["n"].get<std::size_t>() == before);  // the three 1 s samples are not counted
        CHECK(a["unheld"] == 3);
        CHECK(a["median_s"].get<double>() < 1e-3);
      }
  CHECK(seen);
  REQUIRE(summary["timing_notes"].size() == 1);
  const std::string md = read_file(dir / "report.md");
  CHECK(md.find("nvrtc_jit: 3 sample(s) outlasted the blocking kernel's hold") !=
        std::string::npos);
  CHECK(md.find("cudnn_pointwise: timed without the blocking kernel") != std::string::npos);
  const std::string html = read_file(dir / "report.html");
  CHECK(html.find("\"left_out\":\"unheld\"") != std::string::npos);  // drawn as crosses
  CHECK(html.find("<li>cudnn_pointwise: timed without the blocking kernel</li>") !=
        std::string::npos);
}
