// The first lines of a run (pipeline/run_outlook.hpp): what it will do, and how long the last
// run of the same spec, arms and plan in the same folder took; nothing borrowed from a run of
// other arms or another plan.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <utime.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pipeline/run_outlook.hpp"
#include "spec/spec.hpp"
#include "test_support.hpp"

namespace {

kq::StageArm arm(const char* name, kq::Device d) {
  kq::StageArm a;
  a.identity.name = name;
  a.identity.device = d;
  return a;
}

// A finished run in `dir` that started at `t0` and wrote its summary `seconds` later.
void earlier_run(const std::filesystem::path& dir, const kq::Spec& spec,
                 const std::vector<std::string>& arms, bool quick, std::time_t t0, int seconds) {
  std::filesystem::create_directories(dir);
  char iso[32];
  std::tm tm{};
  gmtime_r(&t0, &tm);
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
  nlohmann::json a = nlohmann::json::array();
  for (const auto& n : arms) a.push_back({{"name", n}});
  nlohmann::json command = {"kq", "run", "spec.yaml"};
  if (quick) command.push_back("--quick");
  std::ofstream(dir / "manifest.json") << nlohmann::json{
      {"started", iso},
      {"spec_sha256", spec.sha256},
      {"command", command},
      {"arms", a}}.dump();
  std::ofstream(dir / "summary.json") << "{}";
  utimbuf times{t0 + seconds, t0 + seconds};
  utime((dir / "summary.json").c_str(), &times);
}

}  // namespace

TEST_CASE("the outlook says what the run does, and how long the same run took before") {
  const auto root = kq::test::temp_dir("outlook");
  kq::RunPipelineOptions o;
  o.command = "run";
  o.timing = true;
  o.quick = true;
  o.jobs = 4;
  o.spec = kq::load_spec(kq::test::source_dir() / "specs/residual_relu.yaml");
  o.arms = {arm("cpu_tbb", kq::Device::cpu), arm("nvrtc_jit", kq::Device::cuda)};
  o.dir = root / "now";
  std::filesystem::create_directories(o.dir);

  std::string s = kq::run_outlook(o);
  INFO(s);
  CHECK(s.find("qualify 2 arm(s) (1 CUDA, 1 CPU) on the quick plan, 4 at a time") !=
        std::string::npos);
  CHECK(s.find("CPU arms up to 50 ms a call") != std::string::npos);
  CHECK(s.find("no earlier run") != std::string::npos);

  const std::time_t t0 = std::time(nullptr) - 3600;
  earlier_run(root / "same", o.spec, {"cpu_tbb", "nvrtc_jit"}, true, t0, 42);
  earlier_run(root / "other-arms", o.spec, {"cpu_tbb"}, true, t0 + 60, 7);
  earlier_run(root / "full-plan", o.spec, {"cpu_tbb", "nvrtc_jit"}, false, t0 + 120, 300);
  s = kq::run_outlook(o);
  CHECK(s.find("about 42 s") != std::string::npos);
  CHECK(s.find("leaves out the spec's qualification point") == std::string::npos);
}

TEST_CASE("the outlook names the spec's own points the quick plan leaves out") {
  kq::RunPipelineOptions o;
  o.command = "run";
  o.quick = true;
  o.jobs = 1;
  o.spec = kq::load_spec(kq::test::source_dir() / "specs/kernelbench/04_matrix_vector_matmul.yaml");
  o.arms = {arm("cpu_tbb", kq::Device::cpu)};
  o.dir = kq::test::temp_dir("outlook-left-out") / "now";
  const std::string quick = kq::run_outlook(o);
  INFO(quick);
  CHECK(quick.find("--quick leaves out the spec's qualification point(s) M=17,K=4099, "
                   "M=3,K=65537 (a dim above 4097 or a tensor above 2^31 elements): the full "
                   "plan qualifies them") != std::string::npos);
  o.quick = false;
  CHECK(kq::run_outlook(o).find("leaves out") == std::string::npos);
}
