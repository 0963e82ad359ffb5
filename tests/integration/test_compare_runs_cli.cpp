// `kq compare RUN_A RUN_B` on a fixed H200 run, tests/data/h200-run (copied to temp dirs; never
// modified): the
// run against itself changes nothing (exit 0); one arm made 10% slower is flagged (exit 1); a
// changed verdict is listed (exit 1); usage errors exit 2.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "util/json_lines.hpp"

namespace {

namespace fs = std::filesystem;
using kq::test::run_kq;
using nlohmann::json;

const fs::path kReference = kq::test::source_dir() / "tests" / "data" / "h200-run";

// A copy of the reference whose records pass through `edit` (which may change them in place).
template <class Edit>
fs::path edited_copy(const fs::path& dir, Edit edit) {
  fs::copy(kReference, dir, fs::copy_options::recursive);
  for (const char* f : {"rounds.jsonl", "qualification.jsonl"}) {
    auto records = kq::read_json_lines(dir / f);
    std::ofstream out(dir / f, std::ios::trunc);
    for (auto& r : records) {
      edit(r);
      out << r.dump() << "\n";
    }
  }
  return dir;
}

const std::string kArm = "cuda_fused_residual_relu_v4x2_b1024";

}  // namespace

TEST_CASE("kq compare: a run against itself changes nothing") {
  auto r = run_kq("compare '" + kReference.string() + "' '" + kReference.string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("27 compared: 0 slower, 0 faster, 27 same") != std::string::npos);
  CHECK(r.out.find("no change beyond noise") != std::string::npos);
  CHECK(r.out.find("median A") != std::string::npos);
  CHECK(r.out.find("95% interval") != std::string::npos);
}

TEST_CASE("kq compare: one arm 10% slower is flagged and exits 1") {
  auto tmp = kq::test::temp_dir("compare-cli");
  auto b = edited_copy(tmp / "b", [](json& r) {
    if (r.value("type", "") == "round" && r.value("arm", "") == kArm)
      r["seconds"] = r["seconds"].get<double>() * 1.10;
  });
  auto r = run_kq("compare '" + kReference.string() + "' '" + b.string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("3 slower, 0 faster, 24 same") != std::string::npos);
  CHECK(r.out.find("CHANGED beyond noise") != std::string::npos);
  // Each of the arm's rows ends with its verdict.
  std::size_t rows = 0;
  for (std::size_t p = 0; (p = r.out.find(kArm + " ", p)) != std::string::npos; ++p) {
    auto eol = r.out.find('\n', p);
    CHECK(r.out.substr(p, eol - p).ends_with("slower"));
    ++rows;
  }
  CHECK(rows == 3);

  // A 10% move with a 20% threshold is no change.
  r = run_kq("compare '" + kReference.string() + "' '" + b.string() + "' --threshold 0.2");
  CHECK(r.exit_code == 0);
}

TEST_CASE("kq compare: a changed verdict and a missing arm are listed") {
  auto tmp = kq::test::temp_dir("compare-cli-verdict");
  auto b = edited_copy(tmp / "b", [](json& r) {
    if (r.value("type", "") == "verdict" && r.value("arm", "") == "thrust_residual_relu") {
      r["verdict"] = "rejected";
    }
    if (r.value("type", "") == "round" && r.value("arm", "") == "cudnn_pointwise" &&
        r.value("size", 0) == 268435456)
      r["arm"] = "cudnn_pointwise_renamed";
  });
  auto r = run_kq("compare '" + kReference.string() + "' '" + b.string() + "'");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("thrust_residual_relu: qualified -> rejected") != std::string::npos);
  CHECK(r.out.find("timed in run A only:\n  cudnn_pointwise at 268435456 (single)") !=
        std::string::npos);
  CHECK(r.out.find("cudnn_pointwise_renamed at 268435456 (single)") != std::string::npos);
}

TEST_CASE("kq compare: usage errors exit 2; --help documents the exit codes") {
  CHECK(run_kq("compare").exit_code == 2);
  CHECK(run_kq("compare '" + kReference.string() + "' /no/such/run").exit_code == 2);
  CHECK(run_kq("compare '" + kReference.string() + "' '" + kReference.string() + "' --threshold -1")
            .exit_code == 2);
  auto h = run_kq("compare --help");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("--threshold") != std::string::npos);
  CHECK(h.out.find("Exit code") != std::string::npos);
  auto top = run_kq("--help");
  CHECK(top.out.find("compare RUN_A RUN_B") != std::string::npos);
}
