#include "timing/early_worker.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

#include "record/records.hpp"
#include "timing/worker_command.hpp"
#include "worker/roster.hpp"

namespace kq {

EarlyTimingWorker::EarlyTimingWorker(const std::vector<StageArm>& arms, const TimeStageOptions& opt)
    : opt_(opt) {
  std::vector<TimingWorkerPlan> plans = plan_timing_workers(arms, opt.isolation);
  if (plans.empty() || !plans.front().label.empty()) return;  // no clean worker
  plan_ = std::move(plans.front());
  int fds[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
  roster_fd_ = fds[0];
  thread_ =
      std::thread(&EarlyTimingWorker::supervise, this, worker_command(plan_, opt_, fds[1]), fds[1]);
}

EarlyTimingWorker::~EarlyTimingWorker() { stop(); }

std::string EarlyTimingWorker::warm_line() const {
  if (warmed_.is_null())
    return "  the timing worker started beside qualification is still making its first calls\n";
  const auto w = warmed_.get<rec::Warmed>();
  char line[160];
  std::snprintf(line, sizeof line,
                "  the timing worker made %d first call(s) beside qualification, in %.1f s\n",
                w.calls, w.seconds);
  return line;
}

void EarlyTimingWorker::stop() {
  stop_ = true;
  if (roster_fd_ >= 0) ::close(roster_fd_);
  roster_fd_ = -1;
  if (thread_.joinable()) thread_.join();
}

void EarlyTimingWorker::supervise(std::vector<std::string> argv, int child_fd) {
  WorkerExit ex;
  bool spawned = true;
  try {
    ex = supervise_worker(
        argv, worker_log(plan_, opt_), opt_.silence_timeout_s,
        [&](const nlohmann::json& j) {
          std::lock_guard lock(mu_);
          if (rec::is<rec::Alive>(j)) return opt_.silence_timeout_s;
          if (rec::is<rec::Done>(j)) {
            done_ = true;
          } else if (rec::is<rec::Warmed>(j)) {
            warmed_ = j;
            if (write_) write_(j);  // else written after the worker_start
          } else if (write_) {
            write_(j);  // nothing else comes before the roster
          }
          return opt_.silence_timeout_s;
        },
        {child_fd}, &stop_);
  } catch (const std::exception& e) {
    std::cerr << "  the timing worker beside qualification did not start: " << e.what() << "\n";
    spawned = false;
  }
  ::close(child_fd);
  std::lock_guard lock(mu_);
  exit_ = ex;
  exited_ = true;
  if (!spawned) exit_.exit_code = -1;
}

std::optional<std::string> EarlyTimingWorker::time(
    const TimingWorkerPlan& plan, const std::function<void(const nlohmann::json&)>& write) {
  const std::vector<std::string> ours = names_of(plan_.arms);
  const std::set<std::string> have(ours.begin(), ours.end());
  const std::vector<std::string> names = names_of(plan.arms);
  const bool covered = started() && plan.label.empty() && plan.references.empty() &&
                       std::all_of(names.begin(), names.end(),
                                   [&](const std::string& n) { return have.count(n) > 0; });
  {
    std::lock_guard lock(mu_);
    if (covered && !exited_) {
      write(rec::WorkerStart{plan.label, plan.file, plan.reason, names, {}});
      if (!warmed_.is_null()) write(warmed_);
      write_ = write;
      std::cout << warm_line() << std::flush;
    }
  }
  if (!write_) {
    stop();
    return std::nullopt;
  }
  send_roster(roster_fd_, names);
  roster_fd_ = -1;
  thread_.join();
  std::lock_guard lock(mu_);
  return worker_problem(plan, done_, exit_, write);
}

}  // namespace kq
