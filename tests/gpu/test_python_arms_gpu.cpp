// The python plugin's CUDA arms through kq's qualification, where the plugin was built (on the
// GPU host, against its Python: tools/gpu_check.sh KQ_DIR OUT python): torch_eager,
// torch_compile and the Triton arms qualify on residual_relu and silu_mul, in f32 and in the
// half types; the broken Triton candidates are rejected by the check each declares. A few
// minutes, against the selftest's many: the check to run first after building the plugin. Where
// the plugin is not there it says so and checks nothing.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "qualify/expectation.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

struct Qualified {
  std::string output;                              // kq's stdout and stderr
  std::map<std::string, nlohmann::json> verdicts;  // arm -> its record in the run's summary
};

Qualified qualify(const std::string& spec, const std::string& arms, const std::string& extra) {
  const fs::path dir = kq::test::temp_dir("gpu-python") / fs::path(spec).stem();
  auto r = kq::test::run_kq("qualify " + (kq::test::source_dir() / "specs" / spec).string() +
                            " --quick -j 4 --arms " + arms + " " + extra + " --out '" +
                            dir.string() + "'");
  Qualified q{r.out, {}};
  const auto summary = kq::test::read_file(dir / "summary.json");
  if (summary.empty()) return q;
  // Named, not a temporary: a range-for over parse(...)["arms"] iterates a destroyed object.
  const auto parsed = nlohmann::json::parse(summary);
  for (const auto& a : parsed["arms"]) q.verdicts[a["name"]] = a;
  return q;
}

bool python_plugin_loaded() {
  return kq::test::run_kq("list").out.find("libkq_python.so") != std::string::npos;
}

}  // namespace

TEST_CASE("torch_eager, torch_compile and the Triton arms qualify on CUDA") {
  if (!python_plugin_loaded()) {
    MESSAGE("the python plugin is not built here: nothing to check");
    return;
  }
  const std::pair<const char*, const char*> runs[] = {
      {"residual_relu.yaml",
       "torch_eager,torch_compile,triton_residual_relu_1024,triton_residual_relu_4096"},
      {"silu_mul.yaml", "torch_eager,torch_compile,triton_silu_mul_1024,triton_silu_mul_4096"},
      {"residual_relu_bf16.yaml",
       "torch_eager,torch_compile,triton_residual_relu_1024,triton_residual_relu_4096"},
      {"residual_relu_f16.yaml",
       "torch_eager,torch_compile,triton_residual_relu_1024,triton_residual_relu_4096"},
  };
  for (const auto& [spec, arms] : runs) {
    const auto [output, verdicts] = qualify(spec, arms, "");
    INFO(output);
    for (const auto& [name, v] : verdicts) {
      INFO(spec << " " << name << ": " << v.dump());
      CHECK(v["verdict"] == "qualified");
    }
    CHECK(verdicts.size() == 4);
  }
}

TEST_CASE("the Triton SwiGLU gate qualifies in bf16, computed in float32 and rounded once") {
  if (!python_plugin_loaded()) {
    MESSAGE("the python plugin is not built here: nothing to check");
    return;
  }
  // torch's own silu (eager and Inductor) underflows to -0 below x = -88.7, where the bf16
  // result is still normal: {ulp: 1} may reject it, and that is a finding, not asserted here.
  const auto [output, verdicts] =
      qualify("silu_mul_bf16.yaml", "triton_silu_mul_1024,triton_silu_mul_4096", "");
  INFO(output);
  REQUIRE(verdicts.size() == 2);
  for (const auto& [name, v] : verdicts) {
    INFO(name << ": " << v.dump());
    CHECK(v["verdict"] == "qualified");
  }
}

TEST_CASE("the broken Triton candidates are rejected by the check each declares") {
  if (!python_plugin_loaded()) {
    MESSAGE("the python plugin is not built here: nothing to check");
    return;
  }
  const auto [output, verdicts] =
      qualify("residual_relu_ieee.yaml",
              "broken_triton_unmasked_tail,broken_triton_nan_max,broken_triton_result_cache",
              "--include-broken");
  INFO(output);
  REQUIRE(verdicts.size() == 3);
  for (const auto& [name, v] : verdicts) {
    INFO(name << ": " << v.dump());
    CHECK(kq::caught_as_declared(v["verdict"].get<std::string>(), v.value("check", ""),
                                 v.value("expected_rejection", "")));
  }
}

TEST_CASE("a Python arm's torch scratch goes back to the device after its prepare()") {
  if (!python_plugin_loaded()) {
    MESSAGE("the python plugin is not built here: nothing to check");
    return;
  }
  const auto arms = kq::test::source_dir() / "tests/data/gpu_python_arms";
  const auto [output, verdicts] = qualify("residual_relu.yaml", "test_scratch_dropped",
                                          "--python-arms '" + arms.string() + "'");
  INFO(output);
  REQUIRE(verdicts.count("test_scratch_dropped") == 1);
  CHECK(verdicts.at("test_scratch_dropped")["verdict"] == "qualified");
}
