#include "campaign/run_task.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "campaign/utc.hpp"
#include "util/child_groups.hpp"
#include "util/host_memory.hpp"
#include "util/spawn.hpp"

extern char** environ;

namespace kq::campaign {
namespace {

namespace fs = std::filesystem;

std::string hostname() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

// Slurm's ids for this task, where Slurm started it.
std::string slurm_job() {
  const char* job = std::getenv("SLURM_JOB_ID");
  const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* index = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array && index)
    return std::string(array) + "_" + index + (job ? std::string(" (job ") + job + ")" : "");
  return job ? job : "";
}

// An earlier attempt's run directory, renamed aside.
void keep_earlier_attempt(const fs::path& run_dir) {
  if (!fs::exists(run_dir)) return;
  for (int n = 1;; ++n) {
    const fs::path aside = run_dir.string() + ".attempt-" + std::to_string(n);
    if (!fs::exists(aside)) {
      fs::rename(run_dir, aside);
      return;
    }
  }
}

// The environment of the child: this one with `set` replacing or adding variables.
std::vector<std::string> child_env(const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    bool replaced = false;
    for (const auto& [k, _] : set) replaced = replaced || v.rfind(k + "=", 0) == 0;
    if (!replaced) env.push_back(v);
  }
  for (const auto& [k, val] : set) env.push_back(k + "=" + val);
  return env;
}

// A stop asked of kq (SIGINT, SIGTERM, SIGHUP: Ctrl-C, a kill, scancel, Slurm's time limit).
// A task's kq run is in a process group of its own, which a Ctrl-C at the terminal does not
// reach: the stop is passed on to every running task as SIGTERM (on which kq run kills its
// workers and ends), and each gets kStopGraceS to end before SIGKILL; their records then say
// why they failed, and no task starts after it.
constexpr double kStopGraceS = 20.0;
std::atomic<int> g_stop{0};

void pass_stop_on(int sig) {
  g_stop.store(sig);
  signal_child_groups(SIGTERM);
}

void watch_for_stop() {
  static std::once_flag once;
  std::call_once(once, [] { handle_stop_signals(pass_stop_on); });
}

struct Exit {
  int code = -1, signal = 0;
  bool timed_out = false;
  int stopped_by = 0;       // the signal that stopped kq while the task ran
  bool oom_killed = false;  // a SIGKILL this sweep did not send, as the kernel's OOM kills rose
};

Exit spawn_and_wait(const std::vector<std::string>& argv, const fs::path& log,
                    const std::vector<std::string>& env, double limit_s) {
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + log.string());
  // Its own process group: a kill reaches its workers too.
  pid_t pid = -1;
  try {
    pid = spawn_child({.argv = argv,
                       .env = env,
                       .null_stdin = true,
                       .stdout_fd = fd,
                       .stderr_fd = fd,
                       .own_group = true});
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);

  Exit ex;
  const std::uint64_t oom_kills_before = oom_kills();
  const ChildGroup running(pid);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
  std::optional<Clock::time_point> stop_at;
  bool killed = false;
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    const auto now = Clock::now();
    if (!killed && limit_s > 0 && now > deadline) {
      ex.timed_out = killed = true;
      kill(-pid, SIGKILL);
    }
    if (g_stop.load() != 0 && !stop_at) {
      stop_at = now;
      kill(-pid, SIGTERM);  // it may have started as the stop came
    }
    if (stop_at && !killed && now - *stop_at > std::chrono::duration<double>(kStopGraceS)) {
      killed = true;
      kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (WIFEXITED(status)) ex.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) ex.signal = WTERMSIG(status);
  // Also a stop that ended the task between two looks (it died of the SIGTERM passed on).
  ex.stopped_by = g_stop.load();
  ex.oom_killed = ex.signal == SIGKILL && !killed && oom_kills() > oom_kills_before;
  return ex;
}

// The log's last `n` non-empty lines, joined: what the run said before it ended.
std::string log_tail(const fs::path& log, std::size_t n) {
  std::ifstream in(log);
  std::deque<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    if (l.find_first_not_of(" \t") == std::string::npos) continue;
    lines.push_back(l);
    if (lines.size() > n) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : " | ") + l;
  return out;
}

}  // namespace

int stop_signal() { return g_stop.load(); }

TaskRecord run_task(const fs::path& campaign, const Task& task, const TaskOptions& options) {
  const fs::path run_dir = campaign / task.run_dir;
  const fs::path log = campaign / "logs" / (task.id + ".log");
  fs::create_directories(log.parent_path());
  fs::create_directories(run_dir.parent_path());
  keep_earlier_attempt(run_dir);
  watch_for_stop();

  TaskRecord r;
  r.index = task.index;
  r.id = task.id;
  r.state = TaskState::running;
  r.host = hostname();
  r.started = utc_now();
  r.slurm_job = slurm_job();
  r.gpu = options.gpu;
  write_record(campaign, task, r);
  {
    std::ofstream head(log, std::ios::app);
    head << "== kq sweep: task " << task.id << " on " << r.host
         << (r.gpu.empty() ? "" : ", " + r.gpu) << " at " << r.started << "\n";
  }

  const auto t0 = std::chrono::steady_clock::now();
  const double limit = options.time_limit_s > 0 ? options.time_limit_s : task.time_limit_s;
  Exit ex;
  try {
    ex = spawn_and_wait(task.argv, log, child_env(options.env), limit);
  } catch (const std::exception& e) {  // kq missing where the plan says (another node's path)
    r.state = TaskState::failed;
    r.ended = utc_now();
    r.reason = e.what();
    write_record(campaign, task, r);
    return r;
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.ended = utc_now();
  if (ex.code >= 0) r.exit_code = ex.code;
  if (ex.signal) r.signal = ex.signal;

  const bool whole = ex.code == 0 || ex.code == 1;
  if (whole && fs::exists(run_dir / "summary.json")) {
    r.state = TaskState::completed;
  } else {
    r.state = TaskState::failed;
    if (ex.stopped_by)
      r.reason = std::string("stopped: kq received signal ") + std::to_string(ex.stopped_by) +
                 " (" + strsignal(ex.stopped_by) +
                 ": Ctrl-C, a kill, scancel or the job's time limit) while it ran";
    else if (ex.timed_out)
      r.reason = "killed at its time limit (" + std::to_string(static_cast<long>(limit)) + " s)";
    else if (ex.oom_killed)
      r.reason = "killed by the kernel's OOM killer (signal 9): the node ran out of host memory";
    else if (ex.signal)
      r.reason = std::string("killed by signal ") + std::to_string(ex.signal) + " (" +
                 strsignal(ex.signal) + ")";
    else if (whole)
      r.reason = "kq run ended without a summary.json";
    else
      r.reason = "kq run exited with code " + std::to_string(ex.code);
    r.reason += "; its log ends: " + log_tail(log, 3);
  }
  write_record(campaign, task, r);
  return r;
}

}  // namespace kq::campaign
