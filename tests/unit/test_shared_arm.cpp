// One arm's cases shared by workers, more joining while the cases left outlast a new worker's
// first case: fake workers (threads taking cases through the claims file), no processes.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "qualify/case_claims.hpp"
#include "qualify/shared_arm.hpp"
#include "test_support.hpp"

namespace {

using nlohmann::json;

std::vector<kq::Case> distinct_shapes(int n) {
  std::vector<kq::Case> cases(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    cases[static_cast<std::size_t>(i)].name = "point/" + std::to_string(i);
    cases[static_cast<std::size_t>(i)].shape = {i + 1};
  }
  return cases;
}

// Workers that take their cases through the claims file: the first case of each costs
// `first_s` (a compile from nothing), the others `rest_s`.
struct FakeWorkers {
  std::vector<kq::Case> cases;
  double first_s = 0.2, rest_s = 0.02;
  std::mutex mu;
  std::map<int, std::vector<std::size_t>> taken;  // by worker

  kq::rec::VerdictRecord operator()(int k, const std::filesystem::path& claims,
                                    const kq::Emit& emit) {
    kq::CaseClaims mine(claims, cases);
    kq::rec::VerdictRecord v;
    v.arm = "slow_arm";
    v.verdict = kq::rec::Verdict::qualified;
    v.counts.emplace();
    bool first = true;
    while (const auto i = mine.next()) {
      const kq::Case& c = cases[*i];
      emit(json{{"type", "case_start"}, {"arm", "slow_arm"}, {"case", c.name}});
      const double s = first ? first_s : rest_s;
      std::this_thread::sleep_for(std::chrono::duration<double>(s));
      first = false;
      emit(json{{"type", "case"}, {"arm", "slow_arm"}, {"case", c.name}, {"seconds", s}});
      ++v.counts->passed;
      ++v.counts->total;
      std::lock_guard lock(mu);
      taken[k].push_back(*i);
    }
    return v;
  }
};

kq::SharedArmOptions options(const std::vector<kq::Case>& cases, const std::string& dir) {
  kq::SharedArmOptions o;
  o.workers = 2;
  o.max_workers = 6;
  for (const auto& c : cases) o.case_order.push_back(c.name);
  o.shape_groups = kq::shape_groups(cases).size();
  o.claims = kq::test::temp_dir(dir) / "claims-slow_arm";
  o.check_every_s = 0.02;
  return o;
}

}  // namespace

TEST_CASE("more_workers_pay: the cases left, shared by one more, against twice a first case") {
  kq::ShardPace pace;
  pace.first_max_s = 20;
  pace.rest_s = 30;  // 1.5 s a case
  pace.rest_n = 20;
  pace.done = 24;
  // 200 left at 1.5 s over 5 workers: 60 s, above 40 s
  CHECK(kq::more_workers_pay(pace, 224, 4));
  // 100 left: 30 s, below: a new worker would still be compiling its first case at the end
  pace.done = 124;
  CHECK_FALSE(kq::more_workers_pay(pace, 224, 4));
  pace.rest_n = 2;  // too little seen
  pace.done = 24;
  CHECK_FALSE(kq::more_workers_pay(pace, 224, 4));
}

TEST_CASE("a shared arm takes more workers while its cases outlast a new one's first case") {
  FakeWorkers fake;
  fake.cases = distinct_shapes(120);
  auto o = options(fake.cases, "shared-arm-joins");
  std::atomic<int> asked{0};
  o.room = [&] { return ++asked, true; };
  std::vector<json> records;
  std::mutex mu;
  const auto v = kq::run_shared_arm(o, std::ref(fake), [&](const json& j) {
    std::lock_guard lock(mu);
    records.push_back(j);
  });
  CHECK(v.verdict == kq::rec::Verdict::qualified);
  REQUIRE(v.counts);
  CHECK(v.counts->total == 120);
  CHECK(v.counts->passed == 120);
  CHECK(fake.taken.size() > 2);  // workers joined
  CHECK(fake.taken.size() <= 6);
  std::set<std::size_t> once;
  for (const auto& [k, cases] : fake.taken)
    for (std::size_t i : cases) CHECK(once.insert(i).second);
  CHECK(once.size() == 120);
  CHECK(records.back()["type"] == "verdict");  // the merged verdict, once
  int verdicts = 0;
  for (const auto& j : records) verdicts += j["type"] == "verdict";
  CHECK(verdicts == 1);
  CHECK_FALSE(std::filesystem::exists(o.claims));
}

TEST_CASE("no worker joins where the machine has no room, or the cases left are few") {
  FakeWorkers full;
  full.cases = distinct_shapes(120);
  auto o = options(full.cases, "shared-arm-full");
  o.room = [] { return false; };
  kq::run_shared_arm(o, std::ref(full), [](const json&) {});
  CHECK(full.taken.size() == 2);

  FakeWorkers few;  // 20 cases at 0.02 s after firsts of 0.2 s: a new worker cannot catch up
  few.cases = distinct_shapes(20);
  o = options(few.cases, "shared-arm-few");
  o.room = [] { return true; };
  kq::run_shared_arm(o, std::ref(few), [](const json&) {});
  CHECK(few.taken.size() == 2);
}

TEST_CASE("an arm that declines costs one worker; a worker that fails to start is rethrown") {
  auto o = options(distinct_shapes(10), "shared-arm-declines");
  o.room = [] { return true; };
  int started = 0;
  const auto v = kq::run_shared_arm(
      o,
      [&](int, const std::filesystem::path&, const kq::Emit&) {
        ++started;
        kq::rec::VerdictRecord d;
        d.arm = "slow_arm";
        d.verdict = kq::rec::Verdict::unsupported;
        return d;
      },
      [](const json&) {});
  CHECK(started == 1);
  CHECK(v.verdict == kq::rec::Verdict::unsupported);

  o = options(distinct_shapes(10), "shared-arm-fails");
  CHECK_THROWS_WITH_AS(
      kq::run_shared_arm(
          o,
          [](int, const std::filesystem::path&, const kq::Emit&) -> kq::rec::VerdictRecord {
            throw std::runtime_error("cannot start the worker");
          },
          [](const json&) {}),
      "cannot start the worker", std::runtime_error);
}
