// kq and format-2 (shaped) specs: check-spec prints what it read, with each point's bytes and
// FLOPs, and its canonical form.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

using kq::test::run_kq;

namespace {

std::string v2(const std::string& name) {
  return (kq::test::source_dir() / "tests/data/specs_v2" / name).string();
}

}  // namespace

TEST_CASE("kq check-spec prints a format-2 spec's summary") {
  auto r = run_kq("check-spec " + v2("softmax.yaml") + " " + v2("layer_norm.yaml") + " " +
                  v2("argmax.yaml") + " " + v2("cross_entropy.yaml"));
  INFO(r.out);
  CHECK(r.exit_code == 0);
  for (const char* line :
       {"ok: softmax (format 2, shaped; computed in f32, 2 timing points",
        "  dims: M free, N reduced\n", "  input x: bf16 [M, N]\n", "  temporary mx: f64 [M]\n",
        "    y[m, n] = e[m, n] / s[m]\n", "  compare: y: ulp 2\n",
        // softmax at 32768x4096 bf16: 2 bytes in and out, 5 M N FLOPs
        "    {M: 32768, N: 4096}: 536870912 bytes, 671088640 FLOPs\n", "  params: eps = 1e-05\n",
        "rstd: rtol 8 * u * sqrt(N)", "  output idx: i64 [M]\n", "  output loss: f32 []\n",
        "loss: bound: accumulation"}) {
    CHECK_MESSAGE(r.out.find(line) != std::string::npos, line);
  }
}
