#include "util/spawn.hpp"

#include <fcntl.h>
#include <spawn.h>

#include <cstring>
#include <stdexcept>

extern char** environ;

namespace kq {

pid_t spawn_child(const SpawnSpec& spec) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (spec.null_stdin) posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (spec.stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, spec.stdout_fd, 1);
  if (spec.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&fa, spec.stderr_fd, 2);
  // dup2 onto itself clears close-on-exec in the child alone (POSIX.1-2024; glibc 2.29).
  for (int fd : spec.inherit) posix_spawn_file_actions_adddup2(&fa, fd, fd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (spec.own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<char*> args, envp;
  for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (spec.env) {
    for (const auto& e : *spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char** env = spec.env ? envp.data() : environ;
  pid_t pid = -1;
  const int rc = spec.search_path ? posix_spawnp(&pid, args[0], &fa, &attr, args.data(), env)
                                  : posix_spawn(&pid, args[0], &fa, &attr, args.data(), env);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw std::runtime_error("cannot start " + spec.argv.at(0) + ": " + std::strerror(rc));
  return pid;
}

}  // namespace kq
