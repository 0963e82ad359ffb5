// Qualification workers run side by side (kq run --jobs), but a case above 2^28 elements
// takes tens of GiB of device and host memory: such cases take one machine-wide turn each.
// The parent names a lock file in KQ_BIG_CASE_LOCK; a worker holds an flock on it for the whole
// case. While it waits it emits {"type":"waiting","arm","case"} every few seconds, so that its
// parent does not take the silence for a hang. Without KQ_BIG_CASE_LOCK nothing is locked.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace kq {

inline constexpr std::int64_t kBigCaseElements = std::int64_t{1} << 28;
inline constexpr const char* kBigCaseLockEnv = "KQ_BIG_CASE_LOCK";

class BigCaseLock {
 public:
  // Blocks until the turn is this process's; `heartbeat` is called every few seconds meanwhile.
  explicit BigCaseLock(const std::function<void()>& heartbeat);
  ~BigCaseLock();
  BigCaseLock(const BigCaseLock&) = delete;
  BigCaseLock& operator=(const BigCaseLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace kq
