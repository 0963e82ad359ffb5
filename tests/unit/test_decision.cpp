// The decision and its statistics on synthetic samples.
#include <doctest/doctest.h>

#include "decision/decide.hpp"
#include "decision/sentence.hpp"
#include "noisy_samples.hpp"
#include "stats/stats.hpp"

using kq::test::noisy;

namespace {

// The decision with its sentence, as the summary writes it.
kq::Decision decided(const kq::TimedSamples& s, const std::string& baseline, double min_speedup,
                     const kq::ArmContext& context = {}) {
  kq::Decision d = kq::decide(s, baseline, min_speedup, context);
  d.sentence = kq::decision_sentence(d, {context.device_of(baseline), std::nullopt});
  return d;
}

}  // namespace

TEST_CASE("summary statistics") {
  auto s = kq::summarize({5, 1, 3, 2, 4});
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.q1 == 2);
  CHECK(s.q3 == 4);
  auto [lo, hi] = kq::median_ci95(noisy(10, 0.01, 200, 1));
  CHECK(lo < 10.01);
  CHECK(hi > 9.99);
  CHECK(hi - lo < 0.05);  // about +-14 ranks of 200 over a range of 0.2
}

TEST_CASE("a clear win is adopted for the sizes it wins, with its interval") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[4096]["base"] = noisy(4e-6, 0.02, 40, 1);
  s[4096]["fast"] = noisy(4e-6, 0.02, 40, 2);  // a tie
  s[1 << 20]["base"] = noisy(10e-6, 0.02, 40, 3);
  s[1 << 20]["fast"] = noisy(7e-6, 0.02, 40, 4);
  s[1 << 24]["base"] = noisy(60e-6, 0.02, 40, 5);
  s[1 << 24]["fast"] = noisy(50e-6, 0.02, 40, 6);
  auto d = decided(s, "base", 1.03);
  CHECK(d.baseline_ran);
  REQUIRE(d.ranges.size() == 1);
  CHECK(d.ranges[0].arm == "fast");
  CHECK(d.ranges[0].from == 1 << 20);
  CHECK(d.ranges[0].to == 1 << 24);
  CHECK(d.per_size[0].winner == "base");
  std::string sentence = d.sentence;
  CHECK(sentence.find("Adopt fast for 1048576 to 16777216 elements") != std::string::npos);
  CHECK(sentence.find("keep base") != std::string::npos);
}

TEST_CASE("a win inside the noise or below the threshold is no win") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[4096]["base"] = noisy(10e-6, 0.3, 30, 1);
  s[4096]["fast"] = noisy(9.8e-6, 0.3, 30, 2);
  s[8192]["base"] = noisy(10e-6, 0.001, 30, 3);
  s[8192]["fast"] = noisy(9.9e-6, 0.001, 30, 4);  // 1% faster, surely, but under 1.03
  auto d = decided(s, "base", 1.03);
  CHECK(d.ranges.empty());
  CHECK(d.sentence.rfind("Keep base", 0) == 0);
}

TEST_CASE("a second instance timed for self-agreement (arm#2) is never adopted") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[1 << 20]["base"] = noisy(10e-6, 0.02, 40, 1);
  s[1 << 20]["fast"] = noisy(7.5e-6, 0.02, 40, 2);
  s[1 << 20]["fast#2"] = noisy(7e-6, 0.02, 40, 3);  // faster still, but a control
  auto d = decided(s, "base", 1.03);
  REQUIRE(d.ranges.size() == 1);
  CHECK(d.ranges[0].arm == "fast");
}

TEST_CASE("an arm on another device than the baseline is timed but never adopted") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[4096]["nvrtc_jit"] = noisy(4.2e-6, 0.02, 40, 1);
  s[4096]["cpu_tbb"] = noisy(2.9e-6, 0.02, 40, 2);  // host memory: a different question
  s[4096]["fused"] = noisy(3.8e-6, 0.02, 40, 3);
  kq::ArmContext context;
  context.devices = {{"nvrtc_jit", "cuda"}, {"cpu_tbb", "cpu"}, {"fused", "cuda"}};
  auto d = decided(s, "nvrtc_jit", 1.03, context);
  REQUIRE(d.ranges.size() == 1);
  CHECK(d.ranges[0].arm == "fused");
  REQUIRE(d.other_device.size() == 1);
  CHECK(d.other_device[0].arm == "cpu_tbb");
  CHECK(d.other_device[0].device == "cpu");
  const std::string sentence = d.sentence;
  CHECK(sentence.find("Adopt fused at 4096 elements") == 0);
  CHECK(sentence.find("Not candidates against a cuda baseline: cpu_tbb on cpu") !=
        std::string::npos);
}

TEST_CASE("a winner whose host enqueue outlasts its GPU time is said to be host-bound there") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[4096]["base"] = noisy(4.2e-6, 0.02, 40, 1);
  s[4096]["fast"] = noisy(3.7e-6, 0.02, 40, 2);
  s[1 << 24]["base"] = noisy(60e-6, 0.02, 40, 3);
  s[1 << 24]["fast"] = noisy(50e-6, 0.02, 40, 4);
  kq::ArmContext context;
  context.host_median_s[4096] = {{"base", 6.0e-6}, {"fast", 5.8e-6}};      // > 3.7 us
  context.host_median_s[1 << 24] = {{"base", 10.0e-6}, {"fast", 9.5e-6}};  // < 50 us
  auto d = decided(s, "base", 1.03, context);
  REQUIRE(d.ranges.size() == 1);
  REQUIRE(d.ranges[0].host_bound.size() == 1);
  CHECK(d.ranges[0].host_bound[0].size == 4096);
  const std::string sentence = d.sentence;
  CHECK(sentence.find("At 4096 elements its host enqueue (5.80 us) outlasts its GPU time (3.") !=
        std::string::npos);
  CHECK(sentence.find("16777216 elements its host enqueue") == std::string::npos);
}

TEST_CASE("no baseline, no decision") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[4096]["cpu"] = {1e-5, 1.1e-5};
  auto d = decided(s, "nvrtc_jit", 1.03);
  CHECK(!d.baseline_ran);
  CHECK(d.sentence.find("No decision") == 0);
}

TEST_CASE("bootstrap interval brackets the ratio") {
  auto e = kq::bootstrap_speedup(noisy(2.0, 0.05, 50, 1), noisy(1.0, 0.05, 50, 2));
  CHECK(e.ratio == doctest::Approx(2.0).epsilon(0.05));
  CHECK(e.lo < e.ratio);
  CHECK(e.hi > e.ratio);
  CHECK(e.lo > 1.8);
}

TEST_CASE("a candidate 1.7x over eager that ties the compiled baseline: both in one sentence") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  for (const std::int64_t size : {std::int64_t{1} << 20, std::int64_t{1} << 24}) {
    const auto seed = static_cast<unsigned>(size % 1000);
    s[size]["torch_eager"] = noisy(17.17e-6, 0.002, 40, seed + 1);
    s[size]["torch_compile"] = noisy(10e-6, 0.002, 40, seed + 2);
    s[size]["fused"] = noisy(10.1e-6, 0.002, 40, seed + 3);  // 1.70x over eager, 0.99x compiled
  }
  kq::ArmContext context;
  context.eager = "torch_eager";
  auto d = decided(s, "torch_compile", 1.03, context);
  CHECK(d.eager == "torch_eager");
  CHECK(d.eager_ran == true);
  CHECK(d.ranges.empty());
  // The eager arm is no candidate of its own for the comparison: fused is the best one.
  REQUIRE(d.best_candidate);
  const kq::BestCandidate& best = *d.best_candidate;
  CHECK(best.arm == "fused");
  CHECK(best.eager_speedup->min == doctest::Approx(1.70).epsilon(0.005));
  CHECK(best.speedup.max == doctest::Approx(0.99).epsilon(0.005));
  CHECK(d.sentence ==
        "Keep torch_compile: no arm beats it by 1.03x or more beyond noise at any timed size. "
        "The best candidate, fused, is 1.70x over eager (torch_eager) but 0.99x against "
        "torch_compile.");

  // Without an eager arm the decision says what it always said.
  auto plain = decided(s, "torch_compile", 1.03);
  CHECK(!plain.best_candidate);
  CHECK(!plain.eager);
  CHECK(plain.sentence.find("eager") == std::string::npos);
}

TEST_CASE("a winner's speed-up against eager is stated beside the one against the baseline") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[4096]["torch_eager"] = noisy(20.4e-6, 0.002, 40, 1);
  s[4096]["torch_compile"] = noisy(14.4e-6, 0.002, 40, 2);
  s[4096]["fused"] = noisy(12e-6, 0.002, 40, 3);  // 1.70x over eager, 1.20x over compiled
  kq::ArmContext context;
  context.eager = "torch_eager";
  auto d = decided(s, "torch_compile", 1.03, context);
  REQUIRE(d.ranges.size() == 1);
  CHECK(d.ranges[0].eager_speedup->min == doctest::Approx(1.70).epsilon(0.005));
  CHECK(d.per_size[0].eager_speedup->ratio == doctest::Approx(1.70).epsilon(0.005));
  CHECK(d.per_size[0].eager_speedup->lo < d.per_size[0].eager_speedup->ratio);
  CHECK(!d.best_candidate);
  CHECK(d.sentence ==
        "Adopt fused at 4096 elements: 1.70x over eager (torch_eager) and 1.20x faster than "
        "torch_compile (95% bootstrap interval above 1).");

  // An eager arm that cannot be trusted gives no speed-up against it, and the sentence says so.
  context.not_adopted["torch_eager"] = "launches no work at 4096 elements";
  d = decided(s, "torch_compile", 1.03, context);
  CHECK(d.eager_ran == false);
  CHECK(!d.per_size[0].eager_speedup);
  CHECK(d.sentence.find(
            "No speed-up against eager: the eager arm torch_eager cannot be trusted (launches no "
            "work at 4096 elements).") != std::string::npos);
}

TEST_CASE("the baseline is the first of the spec's that can be one, and the sentence says why") {
  const kq::ArmChoice choice =
      kq::choose_arm({"nvrtc_jit", "torch_compile", "thrust"}, [](const std::string& arm) {
        return arm == "nvrtc_jit" ? std::string("not qualified (rejected)") : std::string();
      });
  CHECK(choice.used == "torch_compile");
  REQUIRE(choice.passed_over.size() == 1);
  CHECK(choice.passed_over[0].arm == "nvrtc_jit");

  kq::TimedSamples s;
  s[4096]["torch_compile"] = noisy(10e-6, 0.002, 40, 1);
  s[4096]["fused"] = noisy(10e-6, 0.002, 40, 2);
  kq::Decision d = kq::decide(s, choice.used, 1.03);
  d.baseline_choice = choice;
  const std::string sentence = kq::decision_sentence(d, {"cuda", std::string("worker died")});
  CHECK(sentence.find("Keep torch_compile") == 0);
  CHECK(sentence.find(" The baseline is torch_compile, the first of the spec's that was timed "
                      "(nvrtc_jit not qualified (rejected)).") != std::string::npos);
  CHECK(sentence.find("The timing stage stopped early (worker died)") != std::string::npos);

  // None of them timed: the sentence says why each was passed over.
  d = kq::decide(s, "nvrtc_jit", 1.03);
  d.baseline_choice = kq::choose_arm({"nvrtc_jit", "thrust"},
                                     [](const std::string& arm) { return arm + " is not here"; });
  CHECK(kq::decision_sentence(d, {}).find(
            "No decision: none of the spec's baselines was timed (nvrtc_jit nvrtc_jit is not "
            "here; thrust thrust is not here).") == 0);
}

TEST_CASE("a decision written as JSON and read back is the same decision") {
  kq::TimedSamples s;
  s[4096]["torch_eager"] = noisy(20.4e-6, 0.002, 40, 1);
  s[4096]["torch_compile"] = noisy(14.4e-6, 0.002, 40, 2);
  s[4096]["fused"] = noisy(12e-6, 0.002, 40, 3);
  s[8192]["torch_compile"] = noisy(14.4e-6, 0.002, 40, 4);
  s[8192]["fused"] = noisy(14.4e-6, 0.002, 40, 5);
  kq::ArmContext context;
  context.eager = "torch_eager";
  context.host_median_s[4096] = {{"fused", 20e-6}};
  kq::Decision d = decided(s, "torch_compile", 1.03, context);
  REQUIRE(d.ranges.size() == 1);
  REQUIRE(d.ranges[0].host_bound.size() == 1);
  const nlohmann::json j = d;
  // The keys summary.json has always had.
  CHECK(j.at("per_size").at(0).contains("eager_lo"));
  CHECK(j.at("ranges").at(0).contains("min_eager_speedup"));
  const kq::Decision back = j.get<kq::Decision>();
  // The choices are written beside the decision, not in it.
  CHECK(back == d);
}

TEST_CASE("format 2: the sentence names the timing points a win covers, not their numbers") {
  kq::TimedSamples s;  // points 1, 2, 3 in the spec's order
  s[1]["base"] = noisy(100e-6, 0.02, 40, 1);
  s[1]["fast"] = noisy(100e-6, 0.02, 40, 2);  // a tie
  s[2]["base"] = noisy(300e-6, 0.02, 40, 3);
  s[2]["fast"] = noisy(200e-6, 0.02, 40, 4);
  s[3]["base"] = noisy(600e-6, 0.02, 40, 5);
  s[3]["fast"] = noisy(400e-6, 0.02, 40, 6);
  kq::Decision d = kq::decide(s, "base", 1.03);
  kq::SentenceFacts facts{"cuda", std::nullopt, {}};
  facts.points = {{1, "M=4096,N=4096"}, {2, "M=32768,N=4096"}, {3, "M=4096,N=50257"}};
  const std::string sentence = kq::decision_sentence(d, facts);
  CHECK(sentence.find("Adopt fast at M=32768,N=4096 and M=4096,N=50257: ") != std::string::npos);
  CHECK(sentence.find("elements") == std::string::npos);
  CHECK(sentence.find("keep base") != std::string::npos);
}
