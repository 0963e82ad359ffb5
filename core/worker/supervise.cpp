#include "worker/supervise.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "util/child_groups.hpp"
#include "util/host_memory.hpp"
#include "util/spawn.hpp"

namespace kq {
namespace {

// When kq is interrupted (SIGINT, SIGTERM, SIGHUP) it kills its workers before it dies: a
// worker stuck in a kernel that never ends would otherwise keep the GPU after its parent is gone.
void kill_workers_and_die(int sig) {
  signal_child_groups(SIGKILL);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] { handle_stop_signals(kill_workers_and_die); });
}

}  // namespace

std::string WorkerExit::describe() const {
  if (hung) return "hung (killed after its deadline)";
  if (oom_killed)
    return "killed by the kernel's OOM killer (signal 9): the machine ran out of host memory";
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

std::filesystem::path self_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

WorkerExit supervise_worker(const std::vector<std::string>& argv,
                            const std::filesystem::path& stderr_log, double initial_silence_s,
                            const std::function<double(const nlohmann::json&)>& on_record,
                            const std::vector<int>& inherit, const std::atomic<bool>* stop) {
  install_interrupt_handlers();
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  int logfd = open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logfd < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    throw std::runtime_error("cannot open " + stderr_log.string());
  }

  const std::uint64_t oom_kills_before = oom_kills();
  pid_t pid = -1;
  try {
    // Its own process group, so a kill reaches anything the worker started.
    pid = spawn_child({.argv = argv,
                       .stdout_fd = pipefd[1],
                       .stderr_fd = logfd,
                       .inherit = inherit,
                       .own_group = true});
  } catch (const std::exception& e) {
    close(pipefd[0]);
    close(pipefd[1]);
    close(logfd);
    throw std::runtime_error(std::string("worker: ") + e.what());
  }
  close(pipefd[1]);
  close(logfd);

  const ChildGroup live(pid);
  WorkerExit ex;
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::duration<double>(initial_silence_s);
  auto last_record = clock::now();
  std::string buf;
  char chunk[65536];
  bool open_pipe = true;
  bool killed_here = false;  // by kq: a hang or a stop
  while (open_pipe) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) {
      ex.hung = killed_here = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (stop != nullptr && stop->load()) {
      killed_here = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    ssize_t got = read(pipefd[0], chunk, sizeof chunk);
    if (got <= 0) {
      open_pipe = false;
      break;
    }
    buf.append(chunk, static_cast<std::size_t>(got));
    std::size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      double silence = on_record(j);
      last_record = clock::now();
      deadline = last_record + std::chrono::duration<double>(silence);
    }
  }
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ex.lingered_s = std::chrono::duration<double>(clock::now() - last_record).count();
  if (WIFSIGNALED(status)) ex.signal = WTERMSIG(status);
  if (WIFEXITED(status)) ex.exit_code = WEXITSTATUS(status);
  // A SIGKILL kq did not send while the kernel's count of OOM kills rose: its OOM killer's (a
  // kill of another process at that moment beside someone's SIGKILL is the rare exception).
  ex.oom_killed = ex.signal == SIGKILL && !killed_here && oom_kills() > oom_kills_before;
  // Anything the worker left behind in its group goes too.
  kill(-pid, SIGKILL);
  return ex;
}

std::function<void(const nlohmann::json&)> claim_protocol_stdout() {
  // A worker dies with the thread that started it, even when that one is killed outright
  // (SIGKILL); kq's threads outlive their workers, which they wait for.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::fflush(stdout);
  int proto = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (proto < 0) throw std::runtime_error("dup of stdout failed");
  dup2(2, 1);
  auto mu = std::make_shared<std::mutex>();
  return [proto, mu](const nlohmann::json& j) {
    std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::lock_guard lock(*mu);
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      ssize_t w = write(proto, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        return;
      }
      p += w;
      left -= static_cast<std::size_t>(w);
    }
  };
}

}  // namespace kq
