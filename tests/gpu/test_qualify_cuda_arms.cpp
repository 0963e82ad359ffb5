// Every CUDA arm through kq's own qualification on every shipped spec (kq selftest): the good
// ones must qualify wherever they claim a spec, the known-broken ones must be rejected by the
// check they declare. Skips, saying why, where no CUDA device is usable. With KQ_TEST_OUT set,
// the selftest's folder is kept there (as KQ_TEST_OUT/selftest).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
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
  for (const auto& a : s["arms"]) {
    const std::string name = a["arm"];
    if (name.find("cuda") == std::string::npos && name.find("nvrtc") == std::string::npos) continue;
    ++cuda_arms;
    CHECK_MESSAGE(a["counted"] == true, name << ": " << a["outcome"]);
  }
  CHECK(cuda_arms > 20);
}
