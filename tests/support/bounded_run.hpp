// Runs the kq binary under a memory limit (RLIMIT_AS) and a wall-clock limit, so that a test of
// hostile input fails when kq regresses instead of taking the machine down with it.
#pragma once
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace kq::test {

struct BoundedResult {
  int exit_code = -1;  // -1 when kq did not exit by itself
  int signal = 0;      // the signal that ended it, if any (SIGKILL at the deadline)
  bool timed_out = false;
  std::string out;  // stdout and stderr together
};

// `kq ARGS...` from the source tree, with at most `memory_bytes` of address space and `seconds`
// of wall-clock time.
inline BoundedResult run_kq_bounded(const std::vector<std::string>& args,
                                    std::size_t memory_bytes = std::size_t{2} << 30,
                                    double seconds = 30) {
  BoundedResult r;
  int pipefd[2];
  if (pipe(pipefd) != 0) return r;
  const std::string binary = kq_binary().string();
  const std::string dir = source_dir().string();
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit as{memory_bytes, memory_bytes};
    setrlimit(RLIMIT_AS, &as);
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    close(pipefd[1]);
    if (chdir(dir.c_str()) != 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipefd[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left < 1000 ? left : 1000)) <= 0) continue;
    const ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace kq::test
