// The process groups of kq's children running now, where a signal handler can reach them. Each
// child kq starts (a worker, a campaign's task) runs in a process group of its own, so that a
// kill reaches whatever it started; a terminal's Ctrl-C reaches kq's group only, so kq's stop
// handler must pass the stop on to theirs.
#pragma once
#include <sys/types.h>

#include <atomic>

namespace kq {

// Registers a child's process group for as long as it lives.
class ChildGroup {
 public:
  explicit ChildGroup(pid_t pgid);
  ~ChildGroup();
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

// Sends `sig` to every registered group; async-signal-safe.
void signal_child_groups(int sig);

// Makes `handler` the handler of SIGINT, SIGTERM and SIGHUP (the stops: Ctrl-C, kill, a closed
// terminal, scancel). A signal the caller set to be ignored (nohup, a script's background job)
// stays ignored.
void handle_stop_signals(void (*handler)(int));

}  // namespace kq
