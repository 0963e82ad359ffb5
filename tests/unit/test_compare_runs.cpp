// Comparing two runs (report/compare.hpp) on synthetic run directories written here: the same
// distribution twice, one arm 10% slower, noise and a shift below the threshold, drift from
// block to block within a run (the runs' own noise), throttled and unheld rounds, verdict
// changes, and arms or sizes timed in one run only; and on the committed H200 run, that compare
// counts the samples the summary counts.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <random>

#include "report/compare.hpp"
#include "stats/stats.hpp"
#include "summary/summarize.hpp"
#include "test_support.hpp"
#include "util/json_lines.hpp"

namespace {

using nlohmann::json;

struct ArmTiming {
  std::string arm;
  double seconds;       // the typical time at size 4096; larger sizes scale with the size
  double factor = 1.0;  // multiplies every sample
};

struct RunSpec {
  std::vector<ArmTiming> arms;
  std::vector<std::int64_t> sizes = {4096, 1 << 20};
  int rounds = 30;
  double noise = 0.01;  // relative standard deviation of each sample
  std::uint64_t seed = 1;
  std::map<std::string, std::string> verdicts;  // default: every arm qualified
  int throttled_rounds = 0;  // extra rounds, 3x slower, at half the SM clock (throttled)
  int unheld_rounds = 0;     // extra rounds, 3x slower, their blocking kernel timed out
  // Multipliers of consecutive stretches of the rounds (the rounds split evenly among them):
  // the machine's speed drifting during the run. Empty: no drift.
  std::vector<double> drift;
  // When > 0: the arms run on CUDA (in the manifest) and every round also times the device copy
  // (a light record) at about this many seconds per 4096 elements, times copy_factor.
  double light_seconds = 0;
  double copy_factor = 1.0;
  std::string device = "cuda";  // "cpu": the arms are CPU arms and the copy is the host copy
  double floor_s = 0;           // > 0: every round also times the launch floor at this many seconds
  double arm_add_s = 0;         // added to every arm's samples (a launch path slower by this much)
  // Format 2: each size's point (a size_start record names it); the size is then its number.
  std::map<std::int64_t, std::string> points;
  std::map<std::string, std::string> environment;  // the manifest's machine.environment
};

constexpr double kClockMhz = 1980;  // every round's SM clock, but a throttled one's

std::filesystem::path write_run(const std::filesystem::path& dir, const RunSpec& r) {
  std::filesystem::create_directories(dir);
  json manifest_arms = json::array();
  if (r.light_seconds > 0)
    for (const auto& a : r.arms) manifest_arms.push_back({{"name", a.arm}, {"device", r.device}});
  std::ofstream(dir / "manifest.json") << json{
      {"op", "residual_relu"},
      {"spec_sha256", "abc123"},
      {"started", "2026-11-29T00:00:00Z"},
      {"arms", manifest_arms},
      {"machine",
       {{"hostname", "synthetic"},
        {"gpus", {{{"name", "Test GPU"}}}},
        {"environment", r.environment}}}}.dump();
  std::ofstream q(dir / "qualification.jsonl");
  for (const auto& a : r.arms) {
    auto it = r.verdicts.find(a.arm);
    q << json{{"type", "verdict"},
              {"arm", a.arm},
              {"verdict", it == r.verdicts.end() ? "qualified" : it->second}}
             .dump()
      << "\n";
  }
  std::mt19937_64 rng(r.seed);
  std::normal_distribution<double> noise(0.0, r.noise);
  std::ofstream out(dir / "rounds.jsonl");
  for (auto size : r.sizes) {
    const double scale = static_cast<double>(size) / 4096.0;
    if (auto p = r.points.find(size); p != r.points.end())
      out << json{{"type", "size_start"}, {"size", size}, {"point", p->second}}.dump() << "\n";
    for (int k = 0; k < r.rounds + r.throttled_rounds + r.unheld_rounds; ++k)
      for (const auto& a : r.arms) {
        const bool throttled = k >= r.rounds && k < r.rounds + r.throttled_rounds;
        const bool unheld = k >= r.rounds + r.throttled_rounds;
        const double drift = k < r.rounds && !r.drift.empty()
                                 ? r.drift[static_cast<std::size_t>(k) * r.drift.size() / r.rounds]
                                 : 1.0;
        json rec = {
            {"type", "round"},
            {"arm", a.arm},
            {"size", size},
            {"mode", "single"},
            {"round", k},
            {"seconds", (a.seconds * scale * a.factor * drift * (1 + noise(rng)) + r.arm_add_s) *
                            (throttled || unheld ? 3 : 1)},
            {"sm_clock_mhz", throttled ? kClockMhz / 2 : kClockMhz}};
        if (unheld) rec["held"] = false;
        out << rec.dump() << "\n";
      }
    for (int k = 0; k < r.rounds && r.floor_s > 0; ++k)
      out << json{{"type", "floor"},
                  {"size", size},
                  {"round", k},
                  {"seconds", r.floor_s * (1 + noise(rng))}}
                 .dump()
          << "\n";
    for (int k = 0; k < r.rounds && r.light_seconds > 0; ++k) {
      json light = {{"type", "light"},
                    {"size", size},
                    {"round", k},
                    {"bytes", 12.0 * static_cast<double>(size)},
                    {"seconds", r.light_seconds * scale * r.copy_factor * (1 + noise(rng))}};
      if (r.device == "cpu") light["device"] = "cpu";
      out << light.dump() << "\n";
    }
  }
  return dir;
}

const kq::TimingChange* find(const kq::RunComparison& c, const std::string& arm,
                             std::int64_t size) {
  for (const auto& t : c.timing)
    if (t.key.arm == arm && t.key.size == size) return &t;
  return nullptr;
}

const std::vector<ArmTiming> kArms = {{"baseline", 10e-6}, {"fused", 9e-6}, {"library", 12e-6}};

// kArms as CPU arms in DIR/a against the same arms times `arm_factor` in DIR/b, with a host copy
// of `copy_seconds` per 4096 elements beside them, times `copy_factor` in b; compared at 2%.
kq::RunComparison cpu_pair(const std::filesystem::path& dir, double arm_factor, double copy_seconds,
                           double copy_factor, std::uint64_t seed) {
  auto moved = kArms;
  for (auto& a : moved) a.factor = arm_factor;
  auto a = write_run(dir / "a",
                     {.arms = kArms, .seed = seed, .light_seconds = copy_seconds, .device = "cpu"});
  auto b = write_run(dir / "b", {.arms = moved,
                                 .seed = seed + 1,
                                 .light_seconds = copy_seconds,
                                 .copy_factor = copy_factor,
                                 .device = "cpu"});
  return kq::compare_runs(a, b, 0.02);
}

}  // namespace

TEST_CASE("an unchanged run: every ratio near 1, no change") {
  auto dir = kq::test::temp_dir("compare-same");
  auto a = write_run(dir / "a", {.arms = kArms, .seed = 1});
  auto b = write_run(dir / "b", {.arms = kArms, .seed = 2});
  auto c = kq::compare_runs(a, b, 0.02);
  REQUIRE(c.timing.size() == 6);
  for (const auto& t : c.timing) {
    INFO(t.key.arm << " " << t.key.size << ": " << t.ratio << " [" << t.lo << ", " << t.hi << "]");
    CHECK(t.verdict == "same");
    CHECK(t.ratio == doctest::Approx(1.0).epsilon(0.02));
    CHECK(t.lo <= t.ratio);
    CHECK(t.ratio <= t.hi);
    CHECK(t.n_a == 30);
    CHECK(t.n_b == 30);
  }
  CHECK(c.same == 6);
  CHECK_FALSE(c.changed());
  CHECK(c.only_a.empty());
  CHECK(c.only_b.empty());
  CHECK(c.verdicts_changed.empty());
  const std::string text = kq::render_comparison(c);
  CHECK(text.find("median A") != std::string::npos);
  CHECK(text.find("0 slower, 0 faster, 6 same") != std::string::npos);
  CHECK(text.find("no change beyond noise") != std::string::npos);
}

TEST_CASE("runs under different settings say so; where caches are is not compared") {
  auto dir = kq::test::temp_dir("compare-settings");
  auto a = write_run(dir / "a", {.arms = kArms,
                                 .seed = 1,
                                 .environment = {{"KQ_CACHE_DIR", "/a"},
                                                 {"TRITON_CACHE_DIR", "/a/triton"},
                                                 {"NVIDIA_TF32_OVERRIDE", "0"}}});
  auto b = write_run(dir / "b", {.arms = kArms,
                                 .seed = 2,
                                 .environment = {{"KQ_CACHE_DIR", "/a"},
                                                 {"TRITON_CACHE_DIR", "/b/triton"},
                                                 {"TORCHINDUCTOR_COMPILE_THREADS", "4"}}});
  const std::string text = kq::render_comparison(kq::compare_runs(a, b, 0.02));
  INFO(text);
  CHECK(text.find("note: the runs ran under different settings: NVIDIA_TF32_OVERRIDE (A 0, B "
                  "unset); TORCHINDUCTOR_COMPILE_THREADS (A unset, B 4)\n") != std::string::npos);
  CHECK(text.find("TRITON_CACHE_DIR") == std::string::npos);
  auto same = write_run(dir / "c", {.arms = kArms, .seed = 3});
  CHECK(kq::render_comparison(kq::compare_runs(same, same, 0.02)).find("different settings") ==
        std::string::npos);
}

TEST_CASE("one arm 10% slower is flagged slower at every size, the others stay the same") {
  auto dir = kq::test::temp_dir("compare-slower");
  auto slower = kArms;
  slower[1].factor = 1.10;
  auto a = write_run(dir / "a", {.arms = kArms, .seed = 1});
  auto b = write_run(dir / "b", {.arms = slower, .seed = 2});
  auto c = kq::compare_runs(a, b);
  for (std::int64_t size : {4096, 1 << 20}) {
    const auto* t = find(c, "fused", size);
    REQUIRE(t != nullptr);
    CHECK(t->verdict == "slower");
    CHECK(t->ratio == doctest::Approx(1.10).epsilon(0.02));
    CHECK(t->lo > 1.0);
    CHECK(find(c, "baseline", size)->verdict == "same");
    CHECK(find(c, "library", size)->verdict == "same");
  }
  CHECK(c.slower == 2);
  CHECK(c.faster == 0);
  CHECK(c.changed());
  const std::string text = kq::render_comparison(c);
  CHECK(text.find("slower") != std::string::npos);
  CHECK(text.find("CHANGED beyond noise") != std::string::npos);

  // The other way round it is faster.
  auto back = kq::compare_runs(b, a);
  CHECK(back.faster == 2);
  CHECK(find(back, "fused", 4096)->verdict == "faster");
  CHECK(find(back, "fused", 4096)->ratio == doctest::Approx(1 / 1.10).epsilon(0.02));
}

TEST_CASE("noise only: more noise and a shift below the threshold are no change") {
  auto dir = kq::test::temp_dir("compare-noise");
  auto shifted = kArms;
  for (auto& a : shifted) a.factor = 1.005;  // 0.5%: may be resolved, but below 2%
  auto a = write_run(dir / "a", {.arms = kArms, .rounds = 100, .seed = 1});
  auto b = write_run(dir / "b", {.arms = shifted, .rounds = 100, .noise = 0.03, .seed = 7});
  auto c = kq::compare_runs(a, b, 0.02);
  for (const auto& t : c.timing) {
    INFO(t.key.arm << " " << t.key.size << ": " << t.ratio << " [" << t.lo << ", " << t.hi << "]");
    CHECK(t.verdict == "same");
  }
  CHECK_FALSE(c.changed());

  // With a threshold of zero a resolved 0.5% shift does count, once the noise is small.
  auto quiet =
      write_run(dir / "quiet", {.arms = shifted, .rounds = 200, .noise = 0.001, .seed = 3});
  auto base = write_run(dir / "base", {.arms = kArms, .rounds = 200, .noise = 0.001, .seed = 4});
  CHECK_FALSE(kq::compare_runs(base, quiet, 0.02).changed());
  auto strict = kq::compare_runs(base, quiet, 0.0);
  CHECK(strict.changed());
  CHECK(strict.slower == 6);
}

TEST_CASE(
    "throttled rounds (by the SM clock) and unheld rounds are left out, as the summary does") {
  auto dir = kq::test::temp_dir("compare-throttled");
  auto a = write_run(dir / "a", {.arms = kArms, .seed = 1});
  auto b =
      write_run(dir / "b", {.arms = kArms, .seed = 2, .throttled_rounds = 12, .unheld_rounds = 5});
  auto c = kq::compare_runs(a, b);
  CHECK_FALSE(c.changed());
  CHECK(find(c, "fused", 4096)->n_b == 30);
  CHECK(c.left_out_a.empty());
  CHECK(c.left_out_b == std::map<std::string, int>{{"throttled", 12 * 6}, {"unheld", 5 * 6}});
  CHECK(kq::render_comparison(c).find("left out of run B: 72 throttled, 30 unheld round(s)") !=
        std::string::npos);

  const json s = kq::summarize_run(b);
  for (const auto& row : s["timing"])
    for (const auto& arm : row["arms"]) {
      INFO(arm.dump());
      CHECK(arm["n"] == 30);
      CHECK(arm["throttled"] == 12);
      CHECK(arm["unheld"] == 5);
    }
}

TEST_CASE("compare counts the summary's samples on the committed H200 run") {
  const auto run = kq::test::source_dir() / "tests" / "data" / "h200-run";
  const json s = kq::summarize_run(run);
  std::map<std::pair<std::string, std::int64_t>, int> summary_n;
  for (const auto& row : s["timing"])
    for (const auto& arm : row["arms"])
      summary_n[{arm["arm"].get<std::string>(), row["size"].get<std::int64_t>()}] = arm["n"];
  const auto c = kq::compare_runs(run, run);
  REQUIRE(c.timing.size() == 27);
  CHECK(summary_n.size() == 27);
  for (const auto& t : c.timing) {
    INFO(t.key.arm << " " << t.key.size << " " << t.key.mode);
    CHECK(t.key.mode == "single");  // the summary's table holds single-mode samples
    CHECK(t.n_a == summary_n[{t.key.arm, t.key.size}]);
    CHECK(t.n_b == t.n_a);
    CHECK(t.verdict == "same");
  }
}

TEST_CASE("drift from block to block within each run is noise: no change") {
  // The same arms on a loaded machine: the first run slowed by 10% for its last third, the
  // second for its last two thirds. Their medians differ by about 10%, resolved by the
  // bootstrap, which takes the samples for independent; the blocks of rounds show the drift.
  auto dir = kq::test::temp_dir("compare-drift");
  auto a = write_run(
      dir / "a", {.arms = kArms, .rounds = 36, .seed = 1, .drift = {1.0, 1.0, 1.0, 1.0, 1.1, 1.1}});
  auto b = write_run(
      dir / "b", {.arms = kArms, .rounds = 36, .seed = 2, .drift = {1.0, 1.0, 1.1, 1.1, 1.1, 1.1}});
  auto c = kq::compare_runs(a, b, 0.02);
  REQUIRE(c.timing.size() == 6);
  int resolved = 0;
  for (const auto& t : c.timing) {
    INFO(t.key.arm << " " << t.key.size << ": " << t.ratio << " [" << t.lo << ", " << t.hi
                   << "] noise " << t.noise_a << " " << t.noise_b);
    CHECK(t.verdict == "same");
    CHECK(t.noise_a == doctest::Approx(0.1).epsilon(0.3));
    CHECK(t.noise_b == doctest::Approx(0.1).epsilon(0.3));
    CHECK(t.noise == doctest::Approx(t.noise_a + t.noise_b));
    resolved += (t.lo > 1.0 || t.hi < 1.0) && std::abs(t.ratio - 1) > 0.02;
  }
  CHECK(resolved > 0);  // the threshold and the interval alone would have cried wolf
  CHECK_FALSE(c.changed());
  CHECK(kq::render_comparison(c).find("noise") != std::string::npos);
}

TEST_CASE("a clean 5% shift with little noise is slower") {
  auto dir = kq::test::temp_dir("compare-shift5");
  auto slower = kArms;
  for (auto& a : slower) a.factor = 1.05;
  auto a = write_run(dir / "a", {.arms = kArms, .seed = 1});
  auto b = write_run(dir / "b", {.arms = slower, .seed = 2});
  auto c = kq::compare_runs(a, b, 0.02);
  for (const auto& t : c.timing) {
    INFO(t.key.arm << " " << t.key.size << ": " << t.ratio << " noise " << t.noise);
    CHECK(t.noise >= 0);
    CHECK(t.noise < 0.05);
    CHECK(t.verdict == "slower");
  }
  CHECK(c.slower == 6);
  CHECK(c.without_noise == 0);
}

TEST_CASE("block noise: the range of block medians; none under 8 samples") {
  CHECK_FALSE(kq::block_noise(std::vector<double>(7, 1.0)).has_value());
  CHECK(kq::block_noise(std::vector<double>(8, 1.0)) == 0.0);
  CHECK(*kq::block_noise({1, 1, 1, 1, 1, 1, 2, 2}) == doctest::Approx(1.0));  // 4 blocks of 2
  std::vector<double> step(32, 1.0);
  for (std::size_t i = 16; i < step.size(); ++i) step[i] = 1.2;  // the second half 20% slower
  // Median of all: 1.1; block medians 1.0 and 1.2.
  CHECK(*kq::block_noise(step) == doctest::Approx(0.2 / 1.1));
  // A shuffle hides drift that blocks see: alternating samples, every block median the same.
  std::vector<double> alternating(32, 1.0);
  for (std::size_t i = 1; i < alternating.size(); i += 2) alternating[i] = 1.2;
  CHECK(*kq::block_noise(alternating) == doctest::Approx(0.0));
}

TEST_CASE("too few rounds for blocks: the other run's noise, or else the threshold alone") {
  auto dir = kq::test::temp_dir("compare-noblocks");
  auto slower = kArms;
  slower[1].factor = 1.10;
  auto a = write_run(dir / "a", {.arms = kArms, .rounds = 6, .seed = 1});
  auto b = write_run(dir / "b", {.arms = slower, .rounds = 6, .seed = 2});
  auto c = kq::compare_runs(a, b);
  CHECK(c.without_noise == 6);
  CHECK(find(c, "fused", 4096)->noise < 0);
  CHECK(find(c, "fused", 4096)->verdict == "slower");
  CHECK(kq::render_comparison(c).find("6 compared on the threshold alone") != std::string::npos);

  // One run long enough for blocks: its noise stands for both.
  auto drifting = write_run(
      dir / "drifting", {.arms = kArms, .rounds = 32, .seed = 3, .drift = {1.0, 1.0, 1.1, 1.1}});
  auto one = kq::compare_runs(drifting, b);
  CHECK(one.without_noise == 0);
  const auto* t = find(one, "fused", 4096);
  CHECK(t->noise_b < 0);
  CHECK(t->noise == doctest::Approx(2 * t->noise_a));
  CHECK(t->verdict == "same");  // 10% slower is within twice a 10% drift
}

TEST_CASE("verdict changes count as a change; arms and sizes in one run only are listed") {
  auto dir = kq::test::temp_dir("compare-verdicts");
  auto more = kArms;
  more.push_back({"newcomer", 8e-6});
  auto a = write_run(dir / "a", {.arms = kArms, .sizes = {4096, 1 << 20, 1 << 24}, .seed = 1});
  auto b = write_run(dir / "b", {.arms = more, .seed = 2, .verdicts = {{"library", "rejected"}}});
  auto c = kq::compare_runs(a, b);
  REQUIRE(c.verdicts_changed.size() == 1);
  CHECK(c.verdicts_changed[0].arm == "library");
  CHECK(c.verdicts_changed[0].a == "qualified");
  CHECK(c.verdicts_changed[0].b == "rejected");
  CHECK(c.qualified_only_b == std::vector<std::string>{"newcomer"});
  CHECK(c.only_a.size() == 3);  // every arm at 2^24
  for (const auto& k : c.only_a) CHECK(k.size == (1 << 24));
  CHECK(c.only_b.size() == 2);  // the newcomer at both sizes
  for (const auto& k : c.only_b) CHECK(k.arm == "newcomer");
  CHECK(c.changed());
  const std::string text = kq::render_comparison(c);
  CHECK(text.find("library: qualified -> rejected") != std::string::npos);
  CHECK(text.find("timed in run A only") != std::string::npos);
  CHECK(text.find("newcomer at 4096 (single)") != std::string::npos);

  // Coverage alone is no change.
  auto d = write_run(dir / "d", {.arms = more, .seed = 3});
  auto only = kq::compare_runs(a, d);
  CHECK_FALSE(only.changed());
  CHECK_FALSE(only.only_a.empty());
}

TEST_CASE("too few samples give no verdict") {
  auto dir = kq::test::temp_dir("compare-few");
  auto slower = kArms;
  slower[1].factor = 1.5;
  auto a = write_run(dir / "a", {.arms = kArms, .rounds = 3, .seed = 1});
  auto b = write_run(dir / "b", {.arms = slower, .rounds = 3, .seed = 2});
  auto c = kq::compare_runs(a, b);
  CHECK(c.too_few == 6);
  CHECK_FALSE(c.changed());
  CHECK(find(c, "fused", 4096)->verdict == "too few samples");
  CHECK(find(c, "fused", 4096)->ratio == doctest::Approx(1.5).epsilon(0.05));
}

TEST_CASE("a change the same run's device copy shows as much is the machine's: same, marked") {
  auto dir = kq::test::temp_dir("compare-copy");
  auto shifted = kArms;
  for (auto& a : shifted) a.factor = 1.04;
  // Every CUDA arm and the copy 4% slower in B (a launch floor that moved): no change.
  auto a = write_run(dir / "a", {.arms = kArms, .noise = 0.002, .seed = 1, .light_seconds = 4e-6});
  auto b = write_run(
      dir / "b",
      {.arms = shifted, .noise = 0.002, .seed = 2, .light_seconds = 4e-6, .copy_factor = 1.04});
  auto c = kq::compare_runs(a, b, 0.02);
  CHECK(c.slower == 0);
  CHECK(c.faster == 0);
  CHECK(c.machine_moved >= 4);  // the rest were within noise of 1 by themselves
  for (const auto& t : c.timing) {
    CHECK(t.verdict == "same");
    CHECK(t.copy_ratio == doctest::Approx(1.04).epsilon(0.01));
  }
  CHECK(kq::render_comparison(c).find("same (the copy moved too)") != std::string::npos);
  // The arms 5% slower while the copy stayed: the arms' change.
  auto slower = kArms;
  for (auto& x : slower) x.factor = 1.05;
  auto d = write_run(dir / "d", {.arms = slower, .seed = 4, .light_seconds = 4e-6});
  auto e = kq::compare_runs(a, d, 0.02);
  CHECK(e.slower == 6);
  CHECK(e.machine_moved == 0);
}

TEST_CASE("CPU arms are weighed against the host copy timed in the same rounds") {
  auto dir = kq::test::temp_dir("compare-host-copy");
  // Load beside run B slows the CPU arms and the host copy alike: the machine moved.
  auto c = cpu_pair(dir, 1.15, 4e-6, 1.15, 1);
  CHECK(c.slower == 0);
  CHECK(c.machine_moved == 6);
  for (const auto& t : c.timing) CHECK(t.copy_ratio == doctest::Approx(1.15).epsilon(0.01));
  // The device copy says nothing of CPU arms: a CPU arm beside a slower device copy is not
  // excused.
  auto loaded = kArms;
  for (auto& a : loaded) a.factor = 1.15;
  const auto a = dir / "a", b = dir / "b";
  auto d =
      write_run(dir / "d", {.arms = loaded, .seed = 3, .light_seconds = 4e-6, .copy_factor = 1.15});
  auto e = write_run(dir / "e", {.arms = kArms, .seed = 4, .light_seconds = 4e-6});
  std::ofstream(d / "manifest.json", std::ios::trunc)
      << std::ifstream(b / "manifest.json").rdbuf();  // CPU arms, with a device copy beside them
  std::ofstream(e / "manifest.json", std::ios::trunc) << std::ifstream(a / "manifest.json").rdbuf();
  auto f = kq::compare_runs(e, d, 0.02);
  CHECK(f.slower == 6);
  CHECK(f.machine_moved == 0);
}

TEST_CASE("a copy that moved the same way further excuses the change; the other way it does not") {
  auto dir = kq::test::temp_dir("compare-copy-further");
  auto c = cpu_pair(dir / "further", 1.4, 4e-6, 2.0, 1);
  CHECK(c.slower == 0);
  CHECK(c.machine_moved == 6);
  // The copy faster while the arms got slower: the arms' own change.
  auto e = cpu_pair(dir / "other-way", 1.4, 4e-6, 0.8, 3);
  CHECK(e.slower == 6);
  CHECK(e.machine_moved == 0);
}

TEST_CASE("a copy far shorter than the arm excuses nothing of it") {
  // Arms of 9 to 12 us beside a copy of 0.4 us (a wait, not memory, sets their time): the copy
  // 15% slower in B, the arms 5%. The copy is not weighed (copy_ratio 0, shown "-").
  auto dir = kq::test::temp_dir("compare-copy-reach");
  auto c = cpu_pair(dir / "short", 1.05, 4e-7, 1.15, 1);
  CHECK(c.slower == 6);
  CHECK(c.machine_moved == 0);
  for (const auto& t : c.timing) CHECK(t.copy_ratio == 0);
  // The same copy at a quarter of the arms' time is weighed: the machine moved.
  auto f = cpu_pair(dir / "near", 1.05, 4e-6, 1.15, 3);
  CHECK(f.slower == 0);
  CHECK(f.machine_moved == 6);
}

TEST_CASE("a CUDA arm's single launches slower by what the launch floor moved: the machine's") {
  auto dir = kq::test::temp_dir("compare-floor");
  const std::vector<ArmTiming> arms = {{"fused", 5e-6}};
  const std::vector<std::int64_t> sizes = {4096};
  auto a = write_run(dir / "a", {.arms = arms,
                                 .sizes = sizes,
                                 .rounds = 40,
                                 .noise = 0.002,
                                 .seed = 1,
                                 .light_seconds = 4e-6,
                                 .floor_s = 3e-6});
  // The launch path 0.25 us slower in B, for the arm and the empty kernel alike.
  auto b = write_run(dir / "b", {.arms = arms,
                                 .sizes = sizes,
                                 .rounds = 40,
                                 .noise = 0.002,
                                 .seed = 2,
                                 .light_seconds = 4e-6,
                                 .floor_s = 3.25e-6,
                                 .arm_add_s = 0.25e-6});
  auto c = kq::compare_runs(a, b, 0.02);
  REQUIRE(c.timing.size() == 1);
  CHECK(c.timing[0].ratio == doctest::Approx(1.05).epsilon(0.01));
  CHECK(c.timing[0].verdict == "same");
  CHECK(c.timing[0].floor_moved);
  CHECK(*c.timing[0].floor_shift_s == doctest::Approx(0.25e-6).epsilon(0.05));
  CHECK(kq::render_comparison(c).find("same (the launch floor moved)") != std::string::npos);
  // The arm 0.25 us slower while the floor stayed: the arm's change.
  auto d = write_run(dir / "d", {.arms = arms,
                                 .sizes = sizes,
                                 .rounds = 40,
                                 .noise = 0.002,
                                 .seed = 3,
                                 .light_seconds = 4e-6,
                                 .floor_s = 3e-6,
                                 .arm_add_s = 0.25e-6});
  auto e = kq::compare_runs(a, d, 0.02);
  REQUIRE(e.timing.size() == 1);
  CHECK(e.timing[0].verdict == "slower");
  CHECK(!e.timing[0].floor_moved);
}

TEST_CASE("a copy that moved within its own noise excuses nothing") {
  auto dir = kq::test::temp_dir("compare-copy-noisy");
  const std::vector<ArmTiming> arm = {{"slow", 10e-6}};
  auto slower = arm;
  slower[0].factor = 1.05;
  // The arm 5% slower with little noise; the copy beside it noisy (10% a sample) and 5% slower
  // by chance: its move is within its own noise, so the arm's change stands.
  auto a = write_run(dir / "a", {.arms = arm,
                                 .rounds = 40,
                                 .noise = 0.002,
                                 .seed = 1,
                                 .light_seconds = 4e-6,
                                 .device = "cpu"});
  auto b = write_run(dir / "b", {.arms = slower,
                                 .rounds = 40,
                                 .noise = 0.002,
                                 .seed = 2,
                                 .light_seconds = 4e-6,
                                 .copy_factor = 1.05,
                                 .device = "cpu"});
  // Rewrite both runs' copies with 10% noise a sample.
  for (const auto& d : {a, b}) {
    std::vector<json> rec = kq::read_json_lines(d / "rounds.jsonl");
    std::mt19937_64 rng(d == a ? 7 : 8);
    std::normal_distribution<double> noise(0.0, 0.10);
    std::ofstream out(d / "rounds.jsonl", std::ios::trunc);
    for (auto& r : rec) {
      if (r["type"] == "light") r["seconds"] = r["seconds"].get<double>() * (1 + noise(rng));
      out << r.dump() << "\n";
    }
  }
  auto c = kq::compare_runs(a, b, 0.02);
  CHECK(c.slower == 2);
  CHECK(c.machine_moved == 0);
  for (const auto& t : c.timing) CHECK(t.copy_ratio == 1.0);
}

TEST_CASE("format-2 runs meet at the point, whatever its number in each run") {
  auto dir = kq::test::temp_dir("compare-points");
  // The same arms; in A point 2 is M=4096,N=16384, in B it is point 1. The synthetic time
  // scales with the number, so matched by point B is twice as fast there.
  auto a = write_run(dir / "a", {.arms = kArms,
                                 .sizes = {1, 2},
                                 .seed = 1,
                                 .points = {{1, "M=32768,N=4096"}, {2, "M=4096,N=16384"}}});
  auto b = write_run(dir / "b", {.arms = kArms,
                                 .sizes = {1, 2},
                                 .seed = 2,
                                 .points = {{1, "M=4096,N=16384"}, {2, "M=8,N=8"}}});
  const auto c = kq::compare_runs(a, b, 0.02);
  REQUIRE(c.timing.size() == 3);
  for (const auto& t : c.timing) {
    CHECK(t.key.point == "M=4096,N=16384");
    CHECK(t.key.size == 2);
    CHECK(t.size_b == 1);
    CHECK(t.ratio == doctest::Approx(0.5).epsilon(0.02));
    CHECK(t.verdict == "faster");
  }
  REQUIRE(c.only_a.size() == 3);
  CHECK(c.only_a[0].point == "M=32768,N=4096");
  REQUIRE(c.only_b.size() == 3);
  CHECK(c.only_b[0].point == "M=8,N=8");
  CHECK(c.only_b[0].size == 2);
  const std::string text = kq::render_comparison(c);
  INFO(text);
  CHECK(text.find("point  mode") != std::string::npos);
  CHECK(text.find("M=4096,N=16384") != std::string::npos);
  CHECK(text.find("fused at M=32768,N=4096 (single)") != std::string::npos);
  CHECK(text.find("fused at M=8,N=8 (single)") != std::string::npos);
}

TEST_CASE("format-1 runs still meet at the size; a run without points (schema 2) reads") {
  auto dir = kq::test::temp_dir("compare-sizes");
  auto a = write_run(dir / "a", {.arms = kArms, .seed = 1});
  auto b = write_run(dir / "b", {.arms = kArms, .sizes = {4096}, .seed = 2});
  const auto c = kq::compare_runs(a, b, 0.02);
  REQUIRE(c.timing.size() == 3);
  for (const auto& t : c.timing) {
    CHECK(t.key.point.empty());
    CHECK(t.key.size == 4096);
    CHECK(t.size_b == 4096);
    CHECK(t.key.where() == "4096");
  }
  CHECK(c.only_a.size() == 3);
  const std::string text = kq::render_comparison(c);
  CHECK(text.find(" size  mode") != std::string::npos);
  CHECK(text.find("fused at 1048576 (single)") != std::string::npos);
}
