// The cases' data of a qualification stage (qualify/case_data.hpp), computed once by the stage
// for every worker: each case in sealed memory (util/sealed_memory.hpp) that the workers map
// read-only, so no worker, and no arm inside one, can change what the others check against.
//
// The stage computes the small cases before any worker starts, and the large ones (from
// kLateCaseBytes, e.g. the case above 2^31 elements, which comes last in every arm's plan) on a
// thread of its own while the workers run their other cases. A worker learns from its command
// line which descriptor holds which case ready at its start, and which cases are still coming;
// the worker asks for each of those over a Unix socket of its own when it reaches the case, and
// gets it, sealed (util/fd_passing.hpp), as soon as it is ready. If the stage cannot compute
// it, the worker computes its own.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plan/case.hpp"
#include "spec/spec.hpp"
#include "util/sealed_memory.hpp"

namespace kq {

// A worker's view: the cases it was given or has received.
class SharedCases {
 public:
  // All of `cases` computed here and now, while the total stays within `budget_bytes` (cases
  // past it are left to the workers, which compute their own); writes one line per case to
  // `log` (when set): its bytes and seconds.
  static SharedCases compute(const Spec& spec, const std::vector<Case>& cases,
                             std::uint64_t budget_bytes, const std::filesystem::path& log = {});
  // In a worker: maps the cases that `argument` (SharedCaseFeed::subscribe) names, checking that
  // each is sealed, and keeps the socket on which the late ones will come.
  static SharedCases adopt(const std::string& argument);
  SharedCases() = default;
  SharedCases(SharedCases&& o) noexcept;
  SharedCases& operator=(SharedCases&& o) noexcept;
  ~SharedCases();

  // "name=fd:bytes;...": the cases held here, as a worker's --case-data argument names them.
  std::string argument() const;
  // The case's data (its CaseDataLayout), or nullptr when the case is not shared (or is still
  // coming: await it first).
  const unsigned char* find(const std::string& case_name) const;
  // When the case is still coming: asks the stage for it and blocks until it arrives, or the
  // stage says it will not, or the stage is gone, or kAwaitLimitS have passed, calling
  // `waiting` every few seconds meanwhile; from then on find() has it, or the worker computes
  // its own. Returns at once otherwise.
  void await(const std::string& case_name, const std::function<void()>& waiting);
  static constexpr double kAwaitLimitS = 600;
  std::size_t size() const { return cases_.size(); }
  std::uint64_t bytes() const;  // all of it

 private:
  friend class SharedCaseFeed;
  // The stage's answer about `case_name`; false when the socket is done.
  bool receive(const std::string& case_name);

  std::map<std::string, SealedMemory> cases_;
  std::map<std::string, std::size_t> coming_;  // announced, not yet here: name, bytes
  int socket_ = -1;
};

// Cases whose data is this large or larger are computed beside the workers (KQ_LATE_CASE_BYTES
// overrides it: tests).
inline constexpr std::uint64_t kLateCaseBytes = std::uint64_t{1} << 30;
std::uint64_t late_case_bytes();

// The stage's side.
class SharedCaseFeed {
 public:
  // Computes the cases of `cases` below late_case_bytes() now, and takes the others to
  // compute beside the workers from start(); all within `budget_bytes` in the plan's order;
  // `log` as for SharedCases::compute.
  SharedCaseFeed(const Spec& spec, const std::vector<Case>& cases, std::uint64_t budget_bytes,
                 const std::filesystem::path& log = {});
  // Starts computing the others, and answering the workers' questions about them.
  void start();
  ~SharedCaseFeed();  // waits for its threads
  SharedCaseFeed(const SharedCaseFeed&) = delete;
  SharedCaseFeed& operator=(const SharedCaseFeed&) = delete;

  // Whether any case is computed beside the workers: they then need a socket each.
  bool has_late() const { return !late_.empty(); }
  // A worker's --case-data argument: the cases ready now by descriptor, the others by size with
  // `worker_socket`, the worker's end of a SOCK_SEQPACKET pair. The feed takes `feed_socket`,
  // the other end, and answers each case the worker asks for on it, as soon as the case is
  // ready (or with word that it will not be), until unsubscribe(feed_socket) closes it.
  std::string subscribe(int feed_socket, int worker_socket);
  void unsubscribe(int feed_socket);
  // Waits for the cases computed beside the workers; then the totals are final.
  void finish();
  std::size_t size() const;
  std::uint64_t bytes() const;
  double early_seconds() const { return early_s_; }
  double late_seconds() const { return late_s_; }
  std::uint64_t late_bytes() const;

 private:
  struct Late {
    Case c;
    std::size_t bytes;
  };
  void compute_late();
  void serve();                                    // the answering thread
  void answer(int feed, const std::string& name);  // (mu_ held)
  void wake();

  Spec spec_;
  SharedCases ready_;
  std::vector<Late> late_;
  std::map<std::string, bool> late_done_;  // computed (true) or given up (false)
  // Each subscribed socket: its questions not yet answered, and whether it is still asked on
  // (its worker may have gone). Closed by unsubscribe alone, so that its number is not reused
  // while its worker's thread still names it; after that a new worker's socket may take it.
  struct Feed {
    std::vector<std::string> questions;
    bool open = true;
  };
  std::map<int, Feed> feeds_;
  bool stop_ = false;
  int wake_[2] = {-1, -1};  // a pipe: the server's poll wakes on it
  mutable std::mutex mu_;
  std::thread computer_, server_;
  std::filesystem::path log_;
  double early_s_ = 0, late_s_ = 0;
};

// The budget for a stage's shared case data: half the host memory available now (the workers
// need the other half for their own copies); KQ_SHARED_CASES_BYTES overrides it (0: every
// worker computes its own, for comparison).
std::uint64_t shared_cases_budget();

}  // namespace kq
