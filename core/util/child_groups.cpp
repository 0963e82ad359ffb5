#include "util/child_groups.hpp"

#include <signal.h>

#include <array>

namespace kq {
namespace {

// Fixed slots: a signal handler may not allocate or lock.
std::array<std::atomic<pid_t>, 64> g_groups{};

}  // namespace

ChildGroup::ChildGroup(pid_t pgid) {
  for (auto& p : g_groups) {
    pid_t empty = 0;
    if (p.compare_exchange_strong(empty, pgid)) {
      slot_ = &p;
      return;
    }
  }
}

ChildGroup::~ChildGroup() {
  if (slot_) slot_->store(0);
}

void signal_child_groups(int sig) {
  for (auto& p : g_groups)
    if (pid_t v = p.load(); v > 0) ::kill(-v, sig);
}

void handle_stop_signals(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace kq
