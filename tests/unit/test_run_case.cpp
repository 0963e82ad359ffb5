// The qualification checks of one case, on small in-process CPU arms with known flaws.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "fake_arm.hpp"
#include "kq/contract.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/case_checks.hpp"
#include "qualify/qualify_arm.hpp"
#include "qualify/run_case.hpp"
#include "spec/spec.hpp"
#include "spec_fixture.hpp"

namespace {

using kq::test::FakeArm;
using kq::test::Flaw;

kq::Case find(const std::vector<kq::Case>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return c;
  FAIL("no case " << name);
  return {};
}

kq::CaseOutcome run(Flaw f, const std::string& case_name) {
  static const kq::Spec spec = kq::test::residual_relu_spec();
  static const auto cases = kq::plan_cases(spec, {false, true});
  FakeArm arm(f);
  return kq::run_case(arm, kq::Device::cpu, spec, find(cases, case_name));
}

}  // namespace

TEST_CASE("a correct arm passes in-contract cases and refuses the others") {
  for (const char* n :
       {"size/0", "size/1", "size/1025", "offset/x+4", "offset/out+12", "rank/3x5x67",
        "values/negative_zero", "values/denormal", "values/overflow", "values/cancel"}) {
    auto o = run(Flaw::none, n);
    CHECK_MESSAGE(o.result == kq::CaseOutcome::Result::passed,
                  n << ": " << o.check << " " << o.message);
  }
  for (const char* n :
       {"layout/x_stride2", "alias/out_is_x", "alias/out_overlaps_residual", "rank/2x3x1x5x7"}) {
    auto o = run(Flaw::none, n);
    CHECK_MESSAGE(o.result == kq::CaseOutcome::Result::refused, n << ": " << o.message);
  }
}

TEST_CASE("each flaw is caught by its check") {
  struct Expect {
    Flaw flaw;
    const char* case_name;
    const char* check;
  };
  for (auto e : {Expect{Flaw::skip_tail, "size/1025", "values"},
                 Expect{Flaw::write_past_end, "size/1025", "output_guard"},
                 Expect{Flaw::write_before, "size/33", "output_guard"},
                 Expect{Flaw::mutate_input, "size/1025", "input_modified"},
                 Expect{Flaw::no_relu, "values/all_negative", "values"},
                 Expect{Flaw::pointer_cache, "size/1025", "new_values"},
                 Expect{Flaw::ignore_contract, "layout/x_stride2", "accepted_out_of_contract"},
                 Expect{Flaw::error_status, "size/7", "arm_error"}}) {
    auto o = run(e.flaw, e.case_name);
    INFO(e.case_name << ": " << o.message);
    CHECK(o.result == kq::CaseOutcome::Result::failed);
    CHECK(o.check == e.check);
  }
}

TEST_CASE("a second run that differs is told apart: old contents read, or nondeterminism") {
  auto old_contents = run(Flaw::reads_output, "size/1025");
  CHECK(old_contents.check == "repeat_differs");
  CHECK(old_contents.index == 0);
  CHECK_MESSAGE(old_contents.message.find("depends on its old contents") != std::string::npos,
                old_contents.message);
  auto nondeterministic = run(Flaw::nondeterministic, "size/1025");
  CHECK(nondeterministic.check == "repeat_differs");
  CHECK_MESSAGE(nondeterministic.message.find("nondeterministic") != std::string::npos,
                nondeterministic.message);
}

TEST_CASE("a value failure names the first bad index, expected and got") {
  auto o = run(Flaw::skip_tail, "size/1025");
  CHECK(o.index == 1024);
  CHECK(o.bad_count == 1);
  CHECK(o.got == "-2.87351825e-16 (0xa5a5a5a5)");  // the poison, never written
  CHECK(o.message.find("first at index 1024") != std::string::npos);
}

TEST_CASE("qualify_arm turns case outcomes into a verdict") {
  const kq::Spec spec = kq::test::residual_relu_spec();
  auto cases = kq::plan_cases(spec, {false, true});
  std::vector<kq::Case> few;
  for (const auto& c : cases)
    if (c.numel() < 5000) few.push_back(c);
  std::vector<nlohmann::json> records;
  FakeArm good(Flaw::none);
  auto v = kq::qualify_arm(good, good.identity(), spec, few,
                           [&](const nlohmann::json& j) { records.push_back(j); });
  CHECK(v.verdict == kq::rec::Verdict::qualified);
  CHECK(v.counts->failed == 0);
  // Per case: case_start (with the longer budget that holds until prepare() returns),
  // prepared, case; then the verdict.
  REQUIRE(records.size() == 3 * few.size() + 1);
  CHECK(records[0]["type"] == "case_start");
  CHECK(records[0]["prepare_budget_s"].get<double>() >=
        records[0]["budget_s"].get<double>() + 120.0);
  CHECK(records[1]["type"] == "prepared");
  CHECK(records[1]["seconds"].get<double>() >= 0.0);
  CHECK(records[2]["type"] == "case");
  FakeArm bad(Flaw::skip_tail);
  v = kq::qualify_arm(bad, bad.identity(), spec, few, [](const nlohmann::json&) {});
  CHECK(v.verdict == kq::rec::Verdict::rejected);
  CHECK(v.check == "values");

  // A worker that takes its cases out of order (the shards of qualify/case_claims.hpp) names
  // the same failing case, the first in the plan; its total is the cases it took.
  std::size_t left = few.size();
  auto backwards = [&]() -> std::optional<std::size_t> {
    if (left == 0) return std::nullopt;
    return --left;
  };
  FakeArm bad_again(Flaw::skip_tail);
  const auto w = kq::qualify_arm(
      bad_again, bad_again.identity(), spec, few, [](const nlohmann::json&) {}, nullptr, backwards);
  CHECK(w.verdict == kq::rec::Verdict::rejected);
  CHECK(w.case_name == v.case_name);
  CHECK(w.counts->total == static_cast<int>(few.size()));
  left = 3;
  const auto three = kq::qualify_arm(
      good, good.identity(), spec, few, [](const nlohmann::json&) {}, nullptr, backwards);
  CHECK(three.counts->total == 3);
  CHECK(three.counts->passed + three.counts->refused == 3);
}

TEST_CASE("a case's host memory: a CUDA arm's output checked on the device takes none") {
  // On the H200 the 2^31 + 5 case was skipped for CUDA arms ("needs 32768 MiB") while its data
  // was the stage's and its checks ran on the device.
  const kq::Spec spec = kq::test::residual_relu_spec();
  const auto cases = kq::plan_cases(spec, {});
  const kq::Case big = find(cases, "size/2147483653");
  const std::uint64_t n = static_cast<std::uint64_t>(big.numel()) * 4;
  // A CPU arm: its two inputs and its output, the output's two copies; the stage's data or not.
  CHECK(kq::case_host_bytes(spec, big, 4, kq::Device::cpu, true) == 5 * n);
  CHECK(kq::case_host_bytes(spec, big, 4, kq::Device::cpu, false) == 8 * n);
#if KQ_HAVE_CUDA
  CHECK(kq::case_host_bytes(spec, big, 4, kq::Device::cuda, true) == 0);
  CHECK(kq::case_host_bytes(spec, big, 4, kq::Device::cuda, false) == 3 * n);
#else
  CHECK(kq::case_host_bytes(spec, big, 4, kq::Device::cuda, true) == 3 * n);
#endif
  // Below the device checks' threshold a CUDA arm's output is checked on the host.
  const kq::Case small = find(cases, "size/1025");
  CHECK(kq::case_host_bytes(spec, small, 4, kq::Device::cuda, true) == 3 * 1025 * 4);
}

TEST_CASE("format 2: one float output compared in full is checked on the device") {
  // KernelBench's tanh at 4096 x 393216 took 10 to 20 s an arm on the H200 with the checks on
  // the host, one arm at a time (the big cases take turns).
  const std::filesystem::path specs = std::filesystem::path(KQ_SOURCE_DIR) / "specs/kernelbench";
  const auto on_device = [&](const std::string& file, const std::string& case_name,
                             kq::Device device = kq::Device::cuda) {
    const kq::Spec spec = kq::load_spec(specs / file);
    return kq::checked_on_device(spec, find(kq::plan_cases(spec, {}), case_name), device,
                                 kq::device_check_min_elements());
  };
  const bool cuda = KQ_HAVE_CUDA;
  CHECK(on_device("22_tanh.yaml", "timing/M=4096,N=393216") == cuda);
  CHECK(on_device("22_tanh.yaml", "timing/M=4096,N=4096") == cuda);
  CHECK_FALSE(on_device("22_tanh.yaml", "timing/M=4096,N=393216", kq::Device::cpu));
  CHECK_FALSE(on_device("22_tanh.yaml", "point/M=7,N=4099"));  // below 2^20 elements
  // The accumulation bound too (the kernels take the bounds beside the reference).
  CHECK(on_device("89_cumsum.yaml", "timing/M=4096,N=4096") == cuda);
  // A scalar loss and a reduction's output (below the threshold), an integer output (exact, on
  // the host).
  CHECK_FALSE(on_device("100_hinge_loss.yaml", "timing/M=32768,N=32768"));
  CHECK_FALSE(on_device("47_sum_reduction.yaml", "timing/B=128,N=4096,K=4095"));
  CHECK_FALSE(on_device("51_argmax.yaml", "timing/B=128,N=4096,K=4095"));
}

TEST_CASE("a CPU arm's case budget grows with a product's work; a CUDA arm's does not") {
  const kq::Spec spec = kq::load_spec(std::filesystem::path(KQ_SOURCE_DIR) /
                                      "specs/kernelbench/02_standard_matmul.yaml");
  kq::PlanOptions quick;
  quick.quick = true;
  const std::vector<kq::Case> cases = kq::plan_cases(spec, quick);
  const auto biggest =
      std::max_element(cases.begin(), cases.end(),
                       [](const auto& a, const auto& b) { return a.numel() < b.numel(); });
  REQUIRE(biggest != cases.end());
  const double cpu = kq::case_budget_seconds(spec, *biggest, kq::Device::cpu);
  const double cuda = kq::case_budget_seconds(spec, *biggest, kq::Device::cuda);
  // The timed point 2048 x 4096 x 8192: 2 M N K = 137 GFLOP, four runs at 0.1 GFLOP/s.
  CHECK(biggest->name == "timing/M=2048,N=4096,K=8192");
  CHECK(cpu - cuda == doctest::Approx(40e-9 * 2.0 * 2048 * 4096 * 8192).epsilon(0.01));
  CHECK(cuda < 600);
  CHECK(kq::prepare_budget_seconds(spec, *biggest, kq::Device::cpu) >= cpu + 120);
}
