// Isolation in timing: which arms share a timing worker (timing/timing_workers.hpp), and what
// the summary makes of isolated workers: speed-ups against the references of the arm's own
// worker, and a disturbed worker (references or controls slower than in the clean worker) whose
// arms are never adopted. An isolated worker's own steps are in test_time_steps.cpp. And the
// order a size's arms are set up in (timing/time_arms.hpp): the baseline before the others.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "summary/summarize.hpp"
#include "test_support.hpp"
#include "timing/time_arms.hpp"
#include "timing/timing_workers.hpp"

using nlohmann::json;

namespace {

const std::filesystem::path kInstall = "/opt/kq/bin/plugins";

kq::StageArm arm(const std::string& name, const std::filesystem::path& plugin,
                 const std::string& origin = "", const std::string& broken = "") {
  kq::StageArm a;
  a.identity.name = name;
  a.identity.origin = origin;
  a.identity.expected_rejection = broken;
  a.plugin_file = plugin;
  return a;
}

std::vector<kq::StageArm> some_arms() {
  const auto py = kInstall / "libkq_python.so";
  return {arm("torch_compile", py, "plugins/python/arms/torch_arms.py"),
          arm("cuda_fused", kInstall / "libkq_cuda_fused.so"),
          arm("fast_py", py, "/home/u/arms/fast.py"),
          arm("broken_a", kInstall / "libkq_broken_cuda.so", "", "timing_output"),
          arm("torch_eager", py, "plugins/python/arms/torch_arms.py"),
          arm("triton_x", py, "plugins/python/arms/triton_arms.py"),
          arm("mine", "/home/u/build/libmine.so"),
          arm("broken_b", kInstall / "libkq_broken_cuda.so", "", "wrong_stream"),
          arm("mine#2", "/home/u/build/libmine.so")};
}

std::vector<std::string> names(const std::vector<kq::StageArm>& arms) {
  std::vector<std::string> out;
  for (const auto& a : arms) out.push_back(a.identity.name);
  return out;
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("outside files and known-broken ones are timed apart, beside the references") {
  const kq::IsolationPolicy policy{
      kInstall, false, {"torch_compile", "nvrtc_jit"}, {"torch_eager"}};
  const auto workers = kq::plan_timing_workers(some_arms(), policy);
  REQUIRE(workers.size() == 4);
  CHECK(workers[0].label.empty());
  CHECK(names(workers[0].arms) == Names{"torch_compile", "cuda_fused", "torch_eager", "triton_x"});
  CHECK(workers[0].references.empty());

  CHECK(workers[1].label == "fast");
  CHECK(workers[1].file == "/home/u/arms/fast.py");
  CHECK(workers[1].reason == "an arm file from outside kq's install");
  CHECK(names(workers[1].arms) == Names{"fast_py"});
  CHECK(names(workers[1].references) == Names{"torch_compile@fast", "torch_eager@fast"});
  // The reference's instance loads from the reference's own file.
  CHECK(workers[1].references[0].identity.origin == "plugins/python/arms/torch_arms.py");

  CHECK(workers[2].label == "kq_broken_cuda");
  CHECK(workers[2].reason == "a known-broken candidate's file");
  CHECK(names(workers[2].arms) == Names{"broken_a", "broken_b"});

  CHECK(workers[3].label == "mine");
  CHECK(workers[3].reason == "a plugin from outside kq's install");
  CHECK(names(workers[3].arms) == Names{"mine", "mine#2"});  // --twice goes with its arm
}

TEST_CASE("--isolate all times every file apart but the references' own") {
  const kq::IsolationPolicy policy{kInstall, true, {"torch_compile"}, {"torch_eager"}};
  const auto workers = kq::plan_timing_workers(some_arms(), policy);
  std::map<std::string, Names> by_label;
  for (const auto& w : workers) by_label[w.label] = names(w.arms);
  CHECK(by_label[""] == Names{"torch_compile", "torch_eager"});
  CHECK(by_label["kq_cuda_fused"] == Names{"cuda_fused"});
  CHECK(by_label["triton_arms"] == Names{"triton_x"});
  CHECK(by_label.size() == 6);
}

TEST_CASE("kq's own plugin whose load left a thread running is timed apart") {
  kq::StageArm threaded = arm("threaded", kInstall / "libkq_threaded.so");
  threaded.load_threads = "1 thread(s) still running (busy)";
  const auto workers =
      kq::plan_timing_workers({arm("c", kInstall / "libkq_cpu.so"), threaded}, {kInstall});
  REQUIRE(workers.size() == 2);
  CHECK(workers[1].reason == "a plugin whose load left 1 thread(s) still running (busy)");
}

TEST_CASE("two outside files of one name get two labels; no reference, no instances") {
  const auto workers = kq::plan_timing_workers(
      {arm("a", "/x/libfast.so"), arm("b", "/y/libfast.so"), arm("c", kInstall / "libkq_cpu.so")},
      {kInstall, false, {"torch_compile"}, {}});
  REQUIRE(workers.size() == 3);
  CHECK(workers[1].label == "fast");
  CHECK(workers[2].label == "fast-2");
  CHECK(workers[1].references.empty());  // torch_compile is not among the arms
}

namespace {

void write_lines(const std::filesystem::path& p, const std::vector<json>& lines) {
  std::ofstream out(p);
  for (const auto& l : lines) out << l.dump() << "\n";
}

json round(const std::string& arm, std::int64_t size, int r, double seconds) {
  return {{"type", "round"},  {"arm", arm}, {"size", size},
          {"mode", "single"}, {"round", r}, {"seconds", seconds * (1 + 0.002 * (r % 5))}};
}

json light(std::int64_t size, int r, double seconds) {
  return {{"type", "light"},
          {"size", size},
          {"round", r},
          {"seconds", seconds * (1 + 0.002 * (r % 5))},
          {"bytes", 24.0 * static_cast<double>(size)}};
}

// A run whose clean worker timed base (the baseline) at 10 us and good at 9 us, and whose
// isolated worker w timed base@w at `base_in_w` and out at 8 us; the device copy at 5 us in
// both (or `copy_in_w` in w).
std::filesystem::path isolated_run(double base_in_w, double copy_in_w = 5e-6) {
  const auto dir = kq::test::temp_dir("timing-isolation");
  json arms = json::array();
  for (const char* n : {"base", "good", "out"})
    arms.push_back({{"name", n}, {"family", "f"}, {"device", "cuda"}});
  std::ofstream(dir / "manifest.json")
      << json{{"op", "residual_relu"},
              {"arms", arms},
              {"spec", {{"baseline", "base"}, {"min_speedup", 1.03}, {"bytes_per_element", 12.0}}}}
             .dump();
  std::vector<json> q;
  for (const char* n : {"base", "good", "out"})
    q.push_back({{"type", "verdict"}, {"arm", n}, {"verdict", "qualified"}});
  write_lines(dir / "qualification.jsonl", q);

  const std::int64_t n = 1 << 20;
  std::vector<json> r;
  r.push_back({{"type", "worker_start"}, {"label", ""}, {"arms", {"base", "good"}}});
  r.push_back({{"type", "size_start"}, {"size", n}, {"arms", {"base", "good"}}});
  for (int i = 0; i < 40; ++i) {
    r.push_back(round("base", n, i, 10e-6));
    r.push_back(round("good", n, i, 9e-6));
    r.push_back(light(n, i, 5e-6));
  }
  r.push_back({{"type", "size_end"}, {"size", n}, {"rounds", 40}, {"stopped_by", "confidence"}});
  r.push_back({{"type", "worker_start"},
               {"label", "w"},
               {"file", "/home/u/libout.so"},
               {"reason", "a plugin from outside kq's install"},
               {"arms", {"out"}},
               {"references", {"base@w"}}});
  r.push_back({{"type", "size_start"}, {"size", n}, {"arms", {"base@w", "out"}}});
  for (int i = 0; i < 40; ++i) {
    r.push_back(round("base@w", n, i, base_in_w));
    r.push_back(round("out", n, i, 8e-6));
    r.push_back(light(n, i, copy_in_w));
  }
  r.push_back({{"type", "size_end"}, {"size", n}, {"rounds", 40}, {"stopped_by", "confidence"}});
  write_lines(dir / "rounds.jsonl", r);
  return dir;
}

const json* cell(const json& s, const std::string& arm) {
  for (const auto& c : s["timing"][0]["arms"])
    if (c["arm"] == arm) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("an isolated arm is weighed against the baseline timed in its own worker") {
  const json s = kq::summarize_run(isolated_run(10.1e-6));
  REQUIRE(s["workers"].size() == 1);
  CHECK(s["workers"][0]["label"] == "w");
  CHECK_FALSE(s["workers"][0]["disturbed"].get<bool>());
  const json* out = cell(s, "out");
  REQUIRE(out);
  CHECK((*out)["speedup"].get<double>() == doctest::Approx(10.1 / 8).epsilon(0.02));
  const json* base_w = cell(s, "base@w");  // its own worker's: against the clean worker's base
  REQUIRE(base_w);
  CHECK((*base_w)["speedup"].get<double>() == doctest::Approx(10.0 / 10.1).epsilon(0.02));
  const json* good = cell(s, "good");
  REQUIRE(good);
  CHECK((*good)["speedup"].get<double>() == doctest::Approx(10.0 / 9).epsilon(0.02));
  const std::string sentence = s["decision"]["sentence"];
  INFO(sentence);
  CHECK(sentence.find("Adopt out") != std::string::npos);
  CHECK(sentence.find("base@w") == std::string::npos);  // a reference is never a candidate
}

TEST_CASE("a worker whose baseline ran slower than in the clean worker adopts nothing") {
  const json s = kq::summarize_run(isolated_run(20e-6));
  REQUIRE(s["workers"].size() == 1);
  const json& w = s["workers"][0];
  CHECK(w["disturbed"].get<bool>());
  const std::string why = w["why"];
  CHECK(why.find("base ran 2.00x slower") == 0);
  CHECK(why.find("than in the clean worker") != std::string::npos);
  const std::string sentence = s["decision"]["sentence"];
  INFO(sentence);
  CHECK(sentence.find("Adopt out") == std::string::npos);
  CHECK(sentence.find("Adopt good") != std::string::npos);  // the clean worker's arms still can
  CHECK(sentence.find("timed in a disturbed worker (w)") != std::string::npos);
  std::map<std::string, json> arms;
  for (const auto& a : s["arms"]) arms[a["name"]] = a;
  CHECK(arms["out"]["verdict"] == "qualified");  // not adopted, not rejected
  CHECK(arms["base"]["verdict"] == "qualified");
}

TEST_CASE("a worker whose device copy ran slower is disturbed too; within noise it is not") {
  const json slow_copy = kq::summarize_run(isolated_run(10e-6, 7e-6));
  CHECK(slow_copy["workers"][0]["disturbed"].get<bool>());
  const json calm = kq::summarize_run(isolated_run(10.05e-6, 5.02e-6));
  CHECK_FALSE(calm["workers"][0]["disturbed"].get<bool>());
}

TEST_CASE("a reference failing a timing check in an isolated worker disturbs it, rejects nothing") {
  const auto dir = isolated_run(10e-6);
  {
    std::ofstream out(dir / "rounds.jsonl", std::ios::app);
    out << json{{"type", "timing_reject"},
                {"arm", "base@w"},
                {"size", 1 << 20},
                {"mode", "single"},
                {"round", 3},
                {"check", "timing_output"},
                {"message", "round 3: 4 of 1048576 elements wrong"}}
               .dump()
        << "\n";
  }
  const json s = kq::summarize_run(dir);
  CHECK(s["workers"][0]["disturbed"].get<bool>());
  std::map<std::string, json> arms;
  for (const auto& a : s["arms"]) arms[a["name"]] = a;
  CHECK(arms["base"]["verdict"] == "qualified");
  CHECK(s["decision"]["sentence"].get<std::string>().find("Adopt out") == std::string::npos);
}

TEST_CASE("a size sets up its baseline first, its eager arm after the contenders") {
  std::vector<kq::TimedArm> arms;
  for (const char* name : {"cuda_softmax", "torch_compile_autotune", "torch_eager@f1",
                           "nvrtc_jit@f1", "torch_compile@f1", "triton_softmax"}) {
    kq::TimedArm a;
    a.identity.name = name;
    arms.push_back(a);
  }
  kq::DecisionRule rule;
  rule.baselines = {"torch_compile", "nvrtc_jit"};
  rule.eager = {"torch_eager"};
  // The first of the rule's baselines among the arms (a worker's references, "arm@label", are
  // their arms), then the others in their order, the later baseline among them, the eager arm
  // last.
  CHECK(kq::setup_order(arms, rule) == std::vector<std::size_t>{4, 0, 1, 3, 5, 2});
  CHECK(kq::setup_order(arms, kq::DecisionRule{}) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});

  // The candidates timed at the size before within kContender of the baseline there, fastest
  // first, then those not timed there, the eager arm, and the slower candidates: the slowest
  // are left out where memory runs short. The later baseline is a candidate by its speed:
  // softmax on an 80 GB H100 (session 34) left out cuda_softmax at 4096 x 393216 while
  // nvrtc_jit, 0.61x at 4096 x 4096, took its memory; then (session 44) the eager arm was left
  // out after nvrtc_jit.
  const std::map<std::string, double> last = {{"triton_softmax", 49.4e-6},
                                              {"cuda_softmax", 50.5e-6},
                                              {"nvrtc_jit@f1", 79.9e-6},
                                              {"torch_compile@f1", 48.7e-6},
                                              {"torch_eager@f1", 278e-6}};
  std::vector<std::size_t> order = kq::setup_order(arms, rule, last);
  CHECK(order == std::vector<std::size_t>{4, 5, 0, 1, 2, 3});
  // Without the baseline's median every candidate timed there is a contender.
  std::map<std::string, double> no_baseline = last;
  no_baseline.erase("torch_compile@f1");
  CHECK(kq::setup_order(arms, rule, no_baseline) == std::vector<std::size_t>{4, 5, 0, 3, 1, 2});

  // The baseline not set up: the next of the rule's baselines comes before the candidates.
  kq::next_baseline_first(order, 1, arms, rule);
  CHECK(order == std::vector<std::size_t>{4, 3, 5, 0, 1, 2});
  kq::next_baseline_first(order, 2, arms, rule);  // none left after it: the order stands
  CHECK(order == std::vector<std::size_t>{4, 3, 5, 0, 1, 2});
  kq::next_baseline_first(order, 6, arms, rule);
  CHECK(order == std::vector<std::size_t>{4, 3, 5, 0, 1, 2});

  // The rule's order picks the next one, not the set-up order.
  rule.baselines = {"torch_compile", "cuda_softmax", "nvrtc_jit"};
  std::vector<std::size_t> two = {4, 3, 5, 0, 1, 2};
  kq::next_baseline_first(two, 1, arms, rule);
  CHECK(two == std::vector<std::size_t>{4, 0, 3, 5, 1, 2});
  CHECK(kq::baseline_rank(arms[3], rule) == 2);
  CHECK(kq::baseline_rank(arms[1], rule) == 3);
}
