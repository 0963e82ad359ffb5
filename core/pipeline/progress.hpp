// What a run prints as it goes: one line per verdict and per timed size, always; on a terminal,
// a status line rewritten in place (arm and case, or size, round and arm); elsewhere (a log, a
// pipe, CI), a line about every 10 s of otherwise silence naming what is still running, so that
// a long run is never silent for minutes.
#pragma once
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "record/records.hpp"

namespace kq {

class Progress {
 public:
  // `heartbeat`: the silence after which a non-terminal output gets a "still running" line
  // (KQ_HEARTBEAT_MS overrides it, for tests).
  explicit Progress(std::chrono::milliseconds heartbeat = std::chrono::seconds(10));
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A record as a stage streams it (record/records.hpp); records of other types are ignored.
  void record(const nlohmann::json& j);
  // The timed points' names by their records' size key ("M=4096,N=393216"), known before any
  // record comes: an arm's set-up at a point is said before the point's own record.
  void name_points(const std::map<std::int64_t, std::string>& points);
  // Prints the arms skipped so far, one line per reason, and clears the status line.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    std::string what;  // "size/1048579", "268435456 elements, round 7"
    Clock::time_point since;
  };

  // What each record prints or shows (mu_ held).
  void on(const rec::VerdictRecord& v);
  void on(const rec::SanitizerFinding& f);
  void on(const rec::CaseStart& c);
  void on(const rec::Waiting& w);
  void on(const rec::SizeStart& s);
  void on(const rec::RoundSample& r);
  void on(const rec::SizeEnd& e);
  void on(const rec::ArmSkip& k);
  void on(const rec::Recheck& r);
  void on(const rec::Disturbed& d);
  void on(const rec::WorkerStart& w);
  void on(const rec::Warmed& w);

  void line(const std::string& s);    // a permanent line (mu_ held)
  void status(const std::string& s);  // the rewritten line (terminals only; mu_ held)
  void skipped_lines();               // the skipped arms, one line per reason (mu_ held)
  void heartbeat_loop();
  std::string running_text(Clock::time_point now) const;  // (mu_ held)

  bool tty_;
  bool status_shown_ = false;
  Clock::time_point start_, last_status_, last_line_;
  // "4096 elements", or a format-2 timing point's name ("M=32768,N=4096") by its number.
  std::string where(std::int64_t size) const;
  std::map<std::int64_t, std::string> points_;
  std::optional<Clock::time_point> worker_start_;  // until its first size starts
  bool worker_warmed_ = false;                     // that worker was started beside qualification
  std::set<std::pair<std::string, std::string>> skips_said_;  // (arm, reason) printed
  std::string slowest_setup_;  // "; slowest ARM 9.1 s": the current size's slowest arm set-up
  // Arms skipped for want of a device, by reason: one line each at finish(), not one per arm.
  std::map<std::string, std::vector<std::string>> skipped_;
  // What each arm is doing now, by its name (qualify: its case; time: the size and round).
  std::map<std::string, Running> running_;

  std::chrono::milliseconds heartbeat_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;  // non-terminals only
};

}  // namespace kq
