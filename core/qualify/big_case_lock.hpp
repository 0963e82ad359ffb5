// Qualification workers run side by side (kq run --jobs), but a case above 2^28 elements
// takes tens of GiB: such cases take machine-wide turns, one per kind of memory they fill. A
// CPU arm's tensors and the copies its checks keep are host memory; a CUDA arm's are device
// memory, its checks' copies too (qualify/case_checks.hpp), and its inputs come from the
// stage's shared pages, so one CPU arm's big case and one CUDA arm's run side by side.
// The parent names a lock file in KQ_BIG_CASE_LOCK; a worker holds an flock on that path plus
// ".cpu" or ".cuda" (".cuda-<GPU>" where the worker was given a GPU) for the whole case. While it
// waits it emits {"type":"waiting","arm","case"} every few seconds, so that its parent does not
// take the silence for a hang. Without KQ_BIG_CASE_LOCK nothing is locked.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "kq/tensor.hpp"
#include "plan/case.hpp"  // kBigCaseElements

namespace kq {

inline constexpr const char* kBigCaseLockEnv = "KQ_BIG_CASE_LOCK";
// The GPU a worker was given (kq run --devices): its CUDA turns are that GPU's alone.
inline constexpr const char* kBigCaseGpuEnv = "KQ_BIG_CASE_GPU";

// Names the turns' lock (KQ_BIG_CASE_LOCK) in `log_dir`, for every worker started after it:
// qualification's and the early timing worker's (timing/warm_arms.hpp).
void name_big_case_turns(const std::filesystem::path& log_dir);

class BigCaseLock {
 public:
  // Blocks until the turn for an arm on `device` is this process's; `heartbeat` is called every
  // few seconds meanwhile.
  BigCaseLock(Device device, const std::function<void()>& heartbeat);
  ~BigCaseLock();
  BigCaseLock(const BigCaseLock&) = delete;
  BigCaseLock& operator=(const BigCaseLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace kq
