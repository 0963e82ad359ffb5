// Runs a kq worker process and reads its JSON-lines output as it comes. A worker that stays
// silent past its deadline is killed (hung); one that dies by a signal or exits without its
// final record has crashed. Either way the caller carries on with the next worker.
#pragma once
#include <atomic>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

struct WorkerExit {
  bool hung = false;
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal killed it (SIGKILL after a hang too)
  bool oom_killed = false;  // a SIGKILL kq did not send, while the kernel's OOM kills rose
  double lingered_s = 0;    // from its last record (or its start) to its exit
  // "exit code 3", "killed by signal 11 (Segmentation fault)", "killed by the kernel's OOM
  // killer (signal 9): the machine ran out of memory"
  std::string describe() const;
};

// Starts `argv` (argv[0] an executable path) with stdout piped and stderr appended to
// `stderr_log`. Calls `on_record` for every JSON line; it returns the number of seconds the
// worker may now stay silent. `initial_silence_s` applies until the first record. The
// descriptors in `inherit` (close-on-exec here) are the worker's too, under the same numbers;
// no other worker started meanwhile gets them.
// `stop`, when given and set, kills the worker (checked every second at most).
WorkerExit supervise_worker(const std::vector<std::string>& argv,
                            const std::filesystem::path& stderr_log, double initial_silence_s,
                            const std::function<double(const nlohmann::json&)>& on_record,
                            const std::vector<int>& inherit = {},
                            const std::atomic<bool>* stop = nullptr);

// The path of the running executable (/proc/self/exe).
std::filesystem::path self_executable();

// In a worker: makes fd 1 the protocol channel alone by moving it to a private descriptor and
// pointing fd 1 at stderr, so plugins that print cannot corrupt the protocol. Returns a writer
// for the protocol channel.
std::function<void(const nlohmann::json&)> claim_protocol_stdout();

}  // namespace kq
