// Cases above 2^28 elements take turns across qualification workers: a second holder waits,
// sending heartbeats, until the first lets go; without KQ_BIG_CASE_LOCK nothing waits.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "qualify/big_case_lock.hpp"
#include "test_support.hpp"

TEST_CASE("without KQ_BIG_CASE_LOCK a big case takes no lock") {
  ::unsetenv(kq::kBigCaseLockEnv);
  int beats = 0;
  kq::BigCaseLock a([&] { ++beats; });
  kq::BigCaseLock b([&] { ++beats; });  // would wait forever if it locked
  CHECK(beats == 0);
}

TEST_CASE("a second big case waits for the first, with heartbeats") {
  const auto dir = kq::test::temp_dir("big-case-lock");
  ::setenv(kq::kBigCaseLockEnv, (dir / "big-case.lock").c_str(), 1);
  std::atomic<int> beats{0};
  std::atomic<bool> second_in{false};
  auto first = std::make_unique<kq::BigCaseLock>([] {});
  std::thread t([&] {
    kq::BigCaseLock second([&] { ++beats; });  // a separate open file: flock excludes it
    second_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(3600));
  CHECK_FALSE(second_in.load());
  CHECK(beats.load() >= 1);
  first.reset();
  t.join();
  CHECK(second_in.load());
  ::unsetenv(kq::kBigCaseLockEnv);
}
