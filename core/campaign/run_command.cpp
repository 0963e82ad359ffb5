#include "campaign/run_command.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "util/spawn.hpp"

namespace kq::campaign {

CommandResult run_command(const std::vector<std::string>& argv) {
  CommandResult r;
  int fd[2];
  if (pipe2(fd, O_CLOEXEC) != 0) return r;
  pid_t pid = -1;
  try {
    pid = spawn_child({.argv = argv,
                       .search_path = true,
                       .null_stdin = true,
                       .stdout_fd = fd[1],
                       .stderr_fd = fd[1]});
  } catch (const std::exception&) {
    close(fd[0]);
    close(fd[1]);
    r.out = argv[0] + ": cannot start (not on PATH?)";
    return r;
  }
  close(fd[1]);
  char buf[4096];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

}  // namespace kq::campaign
