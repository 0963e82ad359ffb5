// One way to start a child process (posix_spawn): its arguments, its environment, where its
// standard streams go, the descriptors it keeps, and whether it gets a process group of its own
// (so that a kill of the group reaches whatever it starts). kq's workers, a campaign's tasks and
// the scheduler's commands all start here.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace kq {

struct SpawnSpec {
  std::vector<std::string> argv;
  std::optional<std::vector<std::string>> env;  // "NAME=value" each; none: this process's
  bool search_path = false;                     // argv[0] looked up on PATH
  bool null_stdin = false;                      // else this process's
  int stdout_fd = -1, stderr_fd = -1;           // -1: this process's
  std::vector<int> inherit;  // descriptors the child keeps (close-on-exec cleared in it alone)
  bool own_group = false;
};

// The child's pid; throws std::runtime_error "cannot start ARGV0: REASON" where it cannot start.
pid_t spawn_child(const SpawnSpec& spec);

}  // namespace kq
