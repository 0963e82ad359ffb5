// Cases above 2^28 elements take turns across qualification workers, one turn per device: a
// second holder for the same device waits, sending heartbeats, until the first lets go; one
// for the other device goes on; without KQ_BIG_CASE_LOCK nothing waits.
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
  kq::BigCaseLock a(kq::Device::cpu, [&] { ++beats; });
  kq::BigCaseLock b(kq::Device::cpu, [&] { ++beats; });  // would wait forever if it locked
  CHECK(beats == 0);
}

TEST_CASE("a second big case on the same device waits for the first, with heartbeats") {
  const auto dir = kq::test::temp_dir("big-case-lock");
  ::setenv(kq::kBigCaseLockEnv, (dir / "big-case.lock").c_str(), 1);
  std::atomic<int> beats{0};
  std::atomic<bool> second_in{false};
  auto first = std::make_unique<kq::BigCaseLock>(kq::Device::cuda, [] {});
  {
    // A CPU arm's big case fills host memory, not the device's: it does not wait.
    kq::BigCaseLock beside(kq::Device::cpu, [&] { ++beats; });
    CHECK(beats.load() == 0);
  }
  std::thread t([&] {
    kq::BigCaseLock second(kq::Device::cuda, [&] { ++beats; });  // a separate open file: excluded
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
