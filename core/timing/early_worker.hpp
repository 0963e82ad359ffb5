// The timing stage's first worker, started beside qualification (kq run): the clean worker
// (timing/timing_workers.hpp) planned from every arm of the run loads its arms and makes their
// first calls at every timed point while the arms qualify (timing/warm_arms.hpp): torch.compile's
// builds (5 to 30 s in every new process on the H200's host), cuDNN's plan searches, NVRTC's
// compiles. When qualification ends, the stage sends it the arms that qualified (worker/
// roster.hpp) and it sets them up and times them as a worker started then would: nothing is timed
// while qualification runs, and its records start with the roster.
//
// Only kq's own good arms are ever in it (an arm from outside, or a known-broken candidate, is
// timed in a worker of its own, started after qualification): no arm that fails qualification
// runs beside the timing of others.
#pragma once
#include <atomic>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "timing/time_stage.hpp"
#include "worker/supervise.hpp"

namespace kq {

class EarlyTimingWorker {
 public:
  // Starts the worker for the clean worker of plan_timing_workers(arms, opt.isolation); none
  // (started() false) when that plan has no clean worker.
  EarlyTimingWorker(const std::vector<StageArm>& arms, const TimeStageOptions& opt);
  ~EarlyTimingWorker();  // a worker not given its roster is stopped
  EarlyTimingWorker(const EarlyTimingWorker&) = delete;
  EarlyTimingWorker& operator=(const EarlyTimingWorker&) = delete;

  bool started() const { return thread_.joinable(); }

  // Times `plan` when it can (its arms are among the worker's, which is still running): writes
  // plan's worker_start, sends the roster, passes on the records, and returns "" or what
  // happened to the worker (worker_problem). std::nullopt, and the worker stopped, when it
  // cannot: the stage then starts plan's worker itself.
  std::optional<std::string> time(const TimingWorkerPlan& plan,
                                  const std::function<void(const nlohmann::json&)>& write);

 private:
  void supervise(std::vector<std::string> argv, int child_fd);
  void stop();

  TimingWorkerPlan plan_;
  TimeStageOptions opt_;
  int roster_fd_ = -1;  // kq's end of the roster's socket, until the roster is sent
  std::atomic<bool> stop_{false};
  std::thread thread_;

  std::mutex mu_;  // guards what follows: the supervising thread writes it
  std::function<void(const nlohmann::json&)> write_;  // set with the roster
  bool exited_ = false, done_ = false;
  WorkerExit exit_;
  nlohmann::json warmed_;  // its warmed record, once it came

  std::string warm_line() const;  // for the terminal, under mu_
};

}  // namespace kq
