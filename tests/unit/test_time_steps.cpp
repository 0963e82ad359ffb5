// The timing stage's steps (set-up, rounds, after the rounds) on fake CPU arms, in process: the
// records they emit, in order, read back through the schema, and what the summary makes of
// them.
#include <doctest/doctest.h>

#include <fstream>

#include "fake_arm.hpp"
#include "record/run_data.hpp"
#include "spec_fixture.hpp"
#include "summary/summarize.hpp"
#include "timing/time_arms.hpp"

namespace {

using nlohmann::json;

kq::Spec brief_spec() {
  kq::Spec spec = kq::test::residual_relu_spec();
  spec.timing.sizes = {4096, 65537};
  spec.timing.min_rounds = 10;
  spec.timing.max_rounds = 24;
  spec.timing.max_seconds = 5;
  spec.timing.warmup_ms = 1;
  return spec;
}

std::vector<json> time_fakes(std::vector<kq::test::FakeArm*> fakes, const kq::Spec& spec) {
  std::vector<kq::TimedArm> arms;
  for (auto* f : fakes) {
    kq::ArmIdentity id = f->identity();
    id.name = f->name;
    arms.push_back({f, id});
  }
  std::vector<json> records;
  kq::time_arms(arms, spec, [&](const json& j) { records.push_back(j); });
  return records;
}

template <class R>
std::vector<R> all(const std::vector<json>& records) {
  std::vector<R> out;
  for (const auto& j : records)
    if (kq::rec::is<R>(j)) out.push_back(j.get<R>());
  return out;
}

}  // namespace

TEST_CASE("a good CPU arm: set-up, rounds with checked samples, the size's end and recheck") {
  kq::test::FakeArm good(kq::test::Flaw::none);
  good.name = "good";
  const kq::Spec spec = brief_spec();
  const auto records = time_fakes({&good}, spec);

  // Each size in order: size_start first, then the samples, size_end, then the recheck.
  REQUIRE(kq::rec::is<kq::rec::SizeStart>(records.front()));
  CHECK(kq::rec::is<kq::rec::Recheck>(records.back()));
  const auto starts = all<kq::rec::SizeStart>(records);
  REQUIRE(starts.size() == 2);
  CHECK(starts[0].size == 4096);
  CHECK(starts[0].arms == std::vector<std::string>{"good"});
  CHECK(starts[0].check_seed == starts[1].check_seed);  // one seed per run

  const auto ends = all<kq::rec::SizeEnd>(records);
  REQUIRE(ends.size() == 2);
  for (const auto& e : ends) {
    CHECK(e.rounds >= spec.timing.min_rounds + 1);  // the closing round after the rule
    CHECK(e.rounds <= spec.timing.max_rounds + 1);
    CHECK(!e.stopped_by.empty());
  }
  const auto rounds = all<kq::rec::RoundSample>(records);
  CHECK(static_cast<int>(rounds.size()) == ends[0].rounds + ends[1].rounds);
  int checked = 0;
  for (const auto& r : rounds) {
    CHECK(r.arm == "good");
    CHECK(r.mode == "single");
    CHECK(r.seconds > 0);
    CHECK(!r.sm_clock_mhz);  // a CPU arm: no SM clock, no hold, no host-only time
    CHECK(!r.held);
    CHECK(!r.host_seconds);
    checked += r.checked.value_or(false);
  }
  CHECK(checked >= ends[0].rounds / 8 + 1);  // one per block of eight, and the closing round
  // The size's end counts them and their time; a CPU arm's are on the host, nothing to say why.
  CHECK(ends[0].checks.value_or(-1) + ends[1].checks.value_or(-1) == checked);
  for (const auto& e : ends) {
    CHECK(e.check_s.value_or(-1) >= 0);
    CHECK(e.check_s.value_or(0) <= e.elapsed_s);
    CHECK(e.patch_s.value_or(-1) >= 0);
    CHECK(e.patch_s.value_or(0) <= e.check_s.value_or(0));
    CHECK(e.check_s.value_or(0) <= e.sample_s.value_or(-1));  // the checks are the samples'
    CHECK(e.sample_s.value_or(0) + e.light_s.value_or(0) <= e.elapsed_s);
    CHECK(e.light_s.value_or(-1) > 0);  // the host copy's
    CHECK(e.host_checks == 0);
    CHECK(e.host_checks_why.empty());
  }
  const auto rechecks = all<kq::rec::Recheck>(records);
  REQUIRE(rechecks.size() == 2);
  CHECK(rechecks[0].ok);
  CHECK(rechecks[0].checked >= 2);
  // The host copy is timed in the same rounds, the control of CPU arms; no device copy, and no
  // CUPTI profile, without a CUDA arm.
  const auto lights = all<kq::rec::LightSample>(records);
  CHECK(lights.size() == rounds.size());
  for (const auto& l : lights) {
    CHECK(l.device == "cpu");
    CHECK(l.bytes == doctest::Approx(12.0 * static_cast<double>(l.size)).epsilon(0.01));
  }
  CHECK(all<kq::rec::Profile>(records).empty());
}

TEST_CASE("an arm that leaves an output it wrote once is rejected in the rounds, then skipped") {
  kq::test::FakeArm good(kq::test::Flaw::none), lazy(kq::test::Flaw::reuse_output);
  good.name = "good";
  lazy.name = "lazy";
  const auto records = time_fakes({&good, &lazy}, brief_spec());

  const auto rejects = all<kq::rec::TimingReject>(records);
  REQUIRE(rejects.size() == 1);
  CHECK(rejects[0].arm == "lazy");
  CHECK(rejects[0].size == 4096);
  CHECK(rejects[0].check == "timing_output");
  CHECK(rejects[0].round >= 0);
  CHECK(rejects[0].index.has_value());
  const auto skips = all<kq::rec::ArmSkip>(records);
  REQUIRE(skips.size() == 1);
  CHECK(skips[0].arm == "lazy");
  CHECK(skips[0].size == 65537);
  CHECK(skips[0].reason.find("rejected by the timing checks") == 0);
  for (const auto& r : all<kq::rec::Recheck>(records)) CHECK(r.ok == (r.arm == "good"));

  // Written as a run and read back, the summary rejects it and keeps the good arm's times.
  const auto dir = std::filesystem::temp_directory_path() / "kq-time-steps";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json")
      << json{{"schema_version", kq::rec::kSchemaVersion},
              {"arms",
               {{{"name", "good"}, {"device", "cpu"}}, {{"name", "lazy"}, {"device", "cpu"}}}}}
             .dump();
  std::ofstream(dir / "qualification.jsonl")
      << json(kq::rec::VerdictRecord{"good", kq::rec::Verdict::qualified, {}, {}, {}, {}, {}})
      << "\n"
      << json(kq::rec::VerdictRecord{"lazy", kq::rec::Verdict::qualified, {}, {}, {}, {}, {}})
      << "\n";
  {
    std::ofstream out(dir / "rounds.jsonl");
    for (const auto& r : records) out << r.dump() << "\n";
  }
  const json s = kq::summarize_run(dir);
  CHECK(s["arms"][1]["verdict"] == "rejected");
  CHECK(s["arms"][1]["check"] == "timing_output");
  CHECK(s["arms"][1]["case"] == "timing/4096");
  CHECK(s["arms"][0]["verdict"] == "qualified");
  CHECK(s["timing"].size() == 2);
  CHECK(s["timing"][1]["arms"].size() == 1);  // only the good arm at the second size
}

TEST_CASE("where the baseline cannot be set up, the next baseline goes before the candidates") {
  using kq::test::Flaw;
  kq::test::FakeArm cand(Flaw::none), second(Flaw::none), first(Flaw::none), eager(Flaw::none);
  cand.name = "cand";
  second.name = "second";
  first.name = "first";
  eager.name = "eager";
  std::vector<std::string> prepared;
  for (auto* f : {&cand, &second, &first, &eager}) f->prepared = &prepared;
  first.fails_above = 4096;  // set up at 4096 elements, not at 65537 (as out of memory)
  kq::Spec spec = brief_spec();
  spec.decision.baselines = {"first", "second"};
  spec.decision.eager = {"eager"};
  const auto records = time_fakes({&cand, &second, &first, &eager}, spec);

  // Set-up order, an arm's buffer sets taken together: at 4096 the baseline, the candidates
  // (the later baseline among them) in their order, the eager arm; at 65537 the baseline fails
  // and the later one comes next, before the candidate.
  std::vector<std::string> order;
  for (const auto& n : prepared)
    if (order.empty() || order.back() != n) order.push_back(n);
  REQUIRE(order.size() >= 8);
  CHECK(std::vector<std::string>(order.begin(), order.begin() + 8) ==
        std::vector<std::string>{"first", "cand", "second", "eager", "first", "second", "cand",
                                 "eager"});
  const auto skips = all<kq::rec::ArmSkip>(records);
  REQUIRE(skips.size() == 1);
  CHECK(skips[0].arm == "first");
  CHECK(skips[0].size == 65537);
  const auto starts = all<kq::rec::SizeStart>(records);
  REQUIRE(starts.size() == 2);  // the rounds interleave in the arms' order all the same
  CHECK(starts[1].arms == std::vector<std::string>{"cand", "second", "eager"});
}

TEST_CASE("an isolated worker stops once its own arms are all rejected") {
  kq::test::FakeArm lazy(kq::test::Flaw::reuse_output), base(kq::test::Flaw::none);
  lazy.name = "lazy";
  base.name = "base@w";  // a reference, timed again beside the isolated arm
  const auto records = time_fakes({&base, &lazy}, brief_spec());
  CHECK(all<kq::rec::TimingReject>(records).size() == 1);
  CHECK(all<kq::rec::SizeStart>(records).size() == 1);  // 65537: not for the reference alone
}
