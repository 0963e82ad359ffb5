// What keeps the timing honest, on synthetic data: which samples are checked, what is physically
// implausible, what the decision does with flagged and timing-rejected arms, and how the summary
// turns the timing checks' records into verdicts.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "decision/decide.hpp"
#include "decision/plausibility.hpp"
#include "decision/sentence.hpp"
#include "noisy_samples.hpp"
#include "summary/summarize.hpp"
#include "test_support.hpp"
#include "timing/output_checks.hpp"

using kq::test::noisy;
using nlohmann::json;

namespace {

kq::TimedFacts big_cuda_call() {
  kq::TimedFacts f;
  f.device = "cuda";
  f.size = std::int64_t{1} << 28;
  f.bytes = 12.0 * static_cast<double>(f.size);  // 3.2 GB
  f.light_gbps = 4200;
  f.l2_bytes = 60e6;
  return f;
}

}  // namespace

TEST_CASE("exactly one sample in every block of eight is checked, at a place the seed draws") {
  std::set<std::vector<int>> patterns;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    kq::CheckSchedule c(seed);
    std::vector<int> where;
    for (int block = 0; block < 50; ++block) {
      int checked = 0;
      for (int i = 0; i < 8; ++i)
        if (c.next()) {
          ++checked;
          where.push_back(i);
        }
      CHECK(checked == 1);
    }
    patterns.insert(where);
  }
  CHECK(patterns.size() == 20);  // no two seeds check the same samples
}

TEST_CASE("a median faster than the memory can move its bytes is flagged, above the L2 only") {
  kq::TimedFacts f = big_cuda_call();
  f.median_s = f.bytes / (1.05 * 4200e9);  // a float4 kernel at 105% of the copy: fine
  CHECK(kq::plausibility_flags(f).empty());
  f.median_s = f.bytes / (600 * 4200e9);  // 60000% of the light: a call that skipped its work
  auto flags = kq::plausibility_flags(f);
  REQUIRE(flags.size() == 1);
  CHECK(flags[0].kind == "faster_than_bytes");
  CHECK(flags[0].message.find("faster than its bytes can move") == 0);
  CHECK(flags[0].message.find("60000%") != std::string::npos);

  kq::TimedFacts small = f;  // a working set inside the L2 may beat the copy, warm
  small.size = 4096;
  small.bytes = 12.0 * 4096;
  small.median_s = small.bytes / (10 * 4200e9);
  CHECK(kq::plausibility_flags(small).empty());

  kq::TimedFacts graph = big_cuda_call();  // the graph replay is held to the same bound
  graph.median_s = graph.bytes / 4200e9;
  graph.graph_median_s = graph.bytes / (3 * 4200e9);
  REQUIRE(kq::plausibility_flags(graph).size() == 1);
  CHECK(kq::plausibility_flags(graph)[0].message.find("graph replay") != std::string::npos);

  kq::TimedFacts cpu = f;  // host memory: no device copy to weigh it against
  cpu.device = "cpu";
  CHECK(kq::plausibility_flags(cpu).empty());
  kq::TimedFacts no_light = f;  // no light measured, no L2 known: nothing to say
  no_light.light_gbps = 0;
  CHECK(kq::plausibility_flags(no_light).empty());
}

TEST_CASE("a call that launches nothing, and a graph that holds less than a call, are flagged") {
  kq::TimedFacts f = big_cuda_call();
  f.median_s = f.bytes / 4000e9;
  json nothing = {{"kernels", 0}, {"memcpys", 0}, {"memsets", 0}};
  f.profile = &nothing;
  auto flags = kq::plausibility_flags(f);
  REQUIRE(flags.size() == 1);
  CHECK(flags[0].kind == "launches_no_work");
  CHECK(flags[0].title == "launches no work");
  CHECK(flags[0].message.find("launches no work: CUPTI saw no kernel") == 0);

  json one = {{"kernels", 1}, {"memcpys", 0}, {"memsets", 0}};
  kq::rec::GraphInfo empty_graph{"arm", 0, 20, 0, 0};
  kq::rec::GraphInfo full_graph{"arm", 0, 20, 20, 20};
  f.profile = &one;
  f.graph = &full_graph;
  CHECK(kq::plausibility_flags(f).empty());
  f.graph = &empty_graph;
  flags = kq::plausibility_flags(f);
  REQUIRE(flags.size() == 1);
  CHECK(flags[0].kind == "graph_fewer_kernels");

  json unavailable = {{"unavailable", "CUPTI not found"}};  // no evidence, no flag
  f.profile = &unavailable;
  CHECK(kq::plausibility_flags(f).empty());
}

TEST_CASE(
    "a flagged or timing-rejected arm is never adopted, however fast; the sentence says why") {
  std::map<std::int64_t, std::map<std::string, std::vector<double>>> s;
  s[1 << 24]["base"] = noisy(50e-6, 0.01, 40, 1);
  s[1 << 24]["cheat"] = noisy(1e-6, 0.01, 40, 2);
  s[1 << 24]["good"] = noisy(40e-6, 0.01, 40, 3);
  kq::ArmContext ctx;
  ctx.not_adopted["cheat"] = "faster than its bytes can move at 16777216 elements";
  auto d = kq::decide(s, "base", 1.03, ctx);
  REQUIRE(d.ranges.size() == 1);
  CHECK(d.ranges[0].arm == "good");
  const std::string sentence = kq::decision_sentence(d, {});
  CHECK(sentence.find("Adopt good") != std::string::npos);
  CHECK(sentence.find("Never adopted: cheat (faster than its bytes can move") != std::string::npos);
  CHECK(d.not_adopted[0].arm == "cheat");

  ctx.not_adopted["base"] = "rejected while timed: timing_output";  // no baseline to trust
  d = kq::decide(s, "base", 1.03, ctx);
  CHECK(d.ranges.empty());
  CHECK(kq::decision_sentence(d, {}).find("No decision: the baseline arm base cannot be "
                                          "trusted") == 0);
}

namespace {

void write_lines(const std::filesystem::path& p, const std::vector<json>& lines) {
  std::ofstream out(p);
  for (const auto& l : lines) out << l.dump() << "\n";
}

// A run directory: two CUDA arms that qualified and were timed at 2^28 elements on a card with
// a 60 MB L2; "cheat" ran at 600 times the light and "wrong" failed a timed sample's check.
std::filesystem::path synthetic_run() {
  const auto dir = kq::test::temp_dir("timing-guards");
  json arms = json::array();
  for (const char* n : {"base", "cheat", "wrong"})
    arms.push_back({{"name", n}, {"family", "f"}, {"device", "cuda"}});
  std::ofstream(dir / "manifest.json")
      << json{{"op", "residual_relu"},
              {"arms", arms},
              {"machine", {{"gpus", json::array({{{"name", "GPU"}, {"l2_bytes", 60000000}}})}}},
              {"spec", {{"baseline", "base"}, {"min_speedup", 1.03}, {"bytes_per_element", 12.0}}}}
             .dump();
  std::vector<json> q;
  for (const char* n : {"base", "cheat", "wrong"})
    q.push_back({{"type", "verdict"}, {"arm", n}, {"verdict", "qualified"}});
  write_lines(dir / "qualification.jsonl", q);
  const std::int64_t n = std::int64_t{1} << 28;
  const double bytes = 12.0 * static_cast<double>(n);
  std::vector<json> r;
  for (int round = 0; round < 12; ++round) {
    r.push_back({{"type", "light"},
                 {"size", n},
                 {"round", round},
                 {"seconds", bytes / 4200e9},
                 {"bytes", bytes}});
    r.push_back({{"type", "round"},
                 {"arm", "base"},
                 {"size", n},
                 {"mode", "single"},
                 {"round", round},
                 {"seconds", bytes / 4300e9 * (1 + 0.001 * round)}});
    r.push_back({{"type", "round"},
                 {"arm", "cheat"},
                 {"size", n},
                 {"mode", "single"},
                 {"round", round},
                 {"seconds", bytes / (600 * 4200e9) * (1 + 0.001 * round)}});
    r.push_back({{"type", "round"},
                 {"arm", "wrong"},
                 {"size", n},
                 {"mode", "single"},
                 {"round", round},
                 {"seconds", bytes / 5000e9 * (1 + 0.001 * round)}});
  }
  r.push_back({{"type", "timing_reject"},
               {"arm", "wrong"},
               {"size", n},
               {"mode", "single"},
               {"round", 5},
               {"check", "timing_output"},
               {"message", "at 268435456 elements, single mode, round 5: 10 of 268435456 wrong"}});
  r.push_back({{"type", "size_end"}, {"size", n}, {"rounds", 12}, {"stopped_by", "confidence"}});
  for (const char* a : {"base", "cheat"})
    r.push_back({{"type", "recheck"}, {"arm", a}, {"size", n}, {"ok", true}, {"checked", 3}});
  r.push_back({{"type", "recheck"},
               {"arm", "wrong"},
               {"size", n},
               {"ok", false},
               {"message", "at 268435456 elements, single mode, round 5: 10 wrong"}});
  write_lines(dir / "rounds.jsonl", r);
  return dir;
}

}  // namespace

TEST_CASE("the summary turns timing rejections into verdicts and flags into a refusal to adopt") {
  const json s = kq::summarize_run(synthetic_run());
  std::map<std::string, json> arms;
  for (const auto& a : s["arms"]) arms[a["name"]] = a;
  CHECK(arms["base"]["verdict"] == "qualified");
  CHECK(arms["cheat"]["verdict"] == "qualified");  // flagged, not rejected: its outputs were right
  CHECK(arms["wrong"]["verdict"] == "rejected");
  CHECK(arms["wrong"]["check"] == "timing_output");
  CHECK(arms["wrong"]["case"] == "timing/268435456");
  CHECK(arms["wrong"]["detail"].get<std::string>().find("round 5") != std::string::npos);

  REQUIRE(s["flags"].size() == 1);
  CHECK(s["flags"][0]["arm"] == "cheat");
  CHECK(s["flags"][0]["kind"] == "faster_than_bytes");
  const std::string sentence = s["decision"]["sentence"];
  CHECK(sentence.find("Adopt") == std::string::npos);
  CHECK(sentence.find("cheat (faster than its bytes can move at 268435456 elements)") !=
        std::string::npos);
  CHECK(sentence.find("wrong (rejected while timed: timing_output)") != std::string::npos);
  bool noted = false;
  for (const auto& note : s["timing"][0]["notes"])
    noted |= note.get<std::string>().find("cheat: flagged, never adopted") == 0;
  CHECK(noted);
}

TEST_CASE("a disturbed timing worker adopts nothing, and the decision says why") {
  const auto dir = synthetic_run();
  {
    std::ofstream out(dir / "rounds.jsonl", std::ios::app);
    out << json{{"type", "disturbed"},
                {"size", std::int64_t{1} << 28},
                {"arm", "base"},
                {"what", "3 kernels, copies or sets launched by another thread of the process"}}
               .dump()
        << "\n";
  }
  const json s = kq::summarize_run(dir);
  const std::string sentence = s["decision"]["sentence"];
  INFO(sentence);
  CHECK(sentence.find("Adopt") == std::string::npos);
  CHECK(sentence.find("the timing worker was disturbed") != std::string::npos);
  std::map<std::string, json> arms;
  for (const auto& a : s["arms"]) arms[a["name"]] = a;
  CHECK(arms["base"]["verdict"] == "qualified");  // nobody is rejected for it
  CHECK(arms["cheat"]["verdict"] == "qualified");
}

TEST_CASE("a product faster than the vendor GEMM can run its FLOPs is flagged, at any size") {
  kq::TimedFacts f = big_cuda_call();
  f.bytes = 3.0 * 4096 * 4096 * 2;  // a bf16 product's operands and result
  f.flops = 2.0 * 4096 * 4096 * 4096;
  f.compute_tflops = 700;
  f.median_s = f.flops / (0.8 * 700e12);  // 80% of cuBLAS: fine
  CHECK(kq::plausibility_flags(f).empty());
  f.median_s = f.flops / (3 * 700e12);  // three times cuBLAS's rate: work skipped
  auto flags = kq::plausibility_flags(f);
  REQUIRE(flags.size() == 1);
  CHECK(flags[0].kind == "faster_than_flops");
  CHECK(flags[0].message.find("300%") != std::string::npos);
  f.compute_tflops = 0;  // no compute light measured: nothing to say
  CHECK(kq::plausibility_flags(f).empty());
}
