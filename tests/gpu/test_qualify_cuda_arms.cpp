// Every CUDA arm through kq's own qualification on every shipped spec (kq selftest): the good
// ones must qualify wherever they claim a spec, the known-broken ones must be rejected by the
// check they declare. Where the python plugin was built (on the GPU host, against its Python),
// its CUDA arms are among them: torch_eager, torch_compile, the Triton arms and the broken
// Triton and torch candidates. Skips, saying why, where no CUDA device is usable. With KQ_TEST_OUT
// set, the selftest's folder is kept there (as KQ_TEST_OUT/selftest).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <map>
#include "test_support.hpp"

TEST_CASE("kq selftest qualifies every good CUDA arm and rejects every broken one") {
  const char* keep = std::getenv("KQ_TEST_OUT");
  const auto dir = (keep != nullptr && *keep != '\0') ? std::filesystem::path(keep) / "selftest"
                                                      : kq::test::temp_dir("gpu-selftest") / "st";
  auto r = kq::test::run_kq("selftest --quick --hang-timeout 20 --out " + dir.string());
  INFO(r.out);
  CHECK(r.exit_code == 0);
  auto s = nlohmann::json::parse(kq::test::read_file(dir / "selftest.json"));
  int cuda_arms = 0;
  std::map<std::string, nlohmann::json> python;  // the python plugin's CUDA arms
  for (const auto& a : s["arms"]) {
    const std::string name = a["arm"];
    for (const char* prefix : {"torch_", "triton_", "broken_triton_", "broken_torch_"})
      if (name.rfind(prefix, 0) == 0 && name.find("_cpu") == std::string::npos) python[name] = a;
    if (name.find("cuda") == std::string::npos && name.find("nvrtc") == std::string::npos) continue;
    ++cuda_arms;
    CHECK_MESSAGE(a["counted"] == true, name << ": " << a["outcome"]);
  }
  CHECK(cuda_arms > 20);
  // The half-precision arms (specs residual_relu_f16 / _bf16, silu_mul_bf16, gelu_f16) and
  // their broken candidates: qualified, or rejected as declared, on the specs they claim.
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& a : s["arms"]) by_name[a["arm"]] = a;
  for (const char* arm :
       {"cuda_fused_residual_relu_v4_b1024", "cuda_fused_residual_relu_v4_b256",
        "cuda_fused_residual_relu_scalar_b256", "cuda_fused_silu_mul_v4_b1024",
        "inline_ptx_residual_relu", "thrust_residual_relu", "thrust_silu_mul", "nvrtc_jit",
        "broken_cuda_half_truncates", "broken_cuda_half_odd_tail", "broken_cuda_half_plain_max",
        "broken_cuda_half_ftz", "broken_cuda_persisting_l2"}) {
    INFO(arm);
    REQUIRE(by_name.count(arm) == 1);
    CHECK_MESSAGE(by_name[arm]["ok"] == true, by_name[arm]["outcome"]);
  }
  if (python.empty()) {
    MESSAGE("the python plugin is not built here: its arms were not run");
    return;
  }
  for (const char* arm :
       {"torch_eager", "torch_compile", "triton_residual_relu_1024", "triton_residual_relu_4096",
        "triton_silu_mul_1024", "triton_silu_mul_4096", "broken_triton_unmasked_tail",
        "broken_triton_nan_max", "broken_triton_result_cache", "broken_triton_content_cache",
        "broken_torch_content_cache_cuda"}) {
    INFO(arm);
    REQUIRE(python.count(arm) == 1);
    CHECK_MESSAGE(python[arm]["ok"] == true, python[arm]["outcome"]);
  }
}
