#include "pipeline/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "record/records.hpp"
#include "report/report_text.hpp"

namespace kq {

namespace {

// KQ_HEARTBEAT_MS, where set to a positive number (tests), else `fallback`.
std::chrono::milliseconds heartbeat_from_env(std::chrono::milliseconds fallback) {
  const char* v = std::getenv("KQ_HEARTBEAT_MS");
  const long ms = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
  return ms > 0 ? std::chrono::milliseconds(ms) : fallback;
}

// "; checks 24.1 s, their reference 0.1 s, 13 of 15 on the host (no device memory for the
// reference's 6442 MB)": what the rounds' output checks took, of which re-evaluating the reference
// where the inputs changed, and, where they took a second or more, how many were not made on
// the device and why (small outputs are compared on the host by design).
std::string checks_text(const rec::SizeEnd& e) {
  if (!e.check_s || !e.checks) return "";
  char took[64];
  std::snprintf(took, sizeof took, "; checks %.1f s, their reference %.1f s", *e.check_s,
                e.patch_s.value_or(0));
  const int host = e.host_checks.value_or(0);
  if (host == 0 || *e.check_s < 1.0) return took;
  return took +
         (", " + std::to_string(host) + " of " + std::to_string(*e.checks) + " on the host") +
         (e.host_checks_why.empty() ? "" : " (" + e.host_checks_why + ")");
}

}  // namespace

Progress::Progress(std::chrono::milliseconds heartbeat)
    : tty_(isatty(STDOUT_FILENO) == 1),
      start_(Clock::now()),
      last_status_(Clock::now()),
      last_line_(Clock::now()),
      heartbeat_(heartbeat_from_env(heartbeat)) {
  if (!tty_) ticker_ = std::thread([this] { heartbeat_loop(); });
}

Progress::~Progress() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void Progress::line(const std::string& s) {
  if (status_shown_) std::cout << "\r\033[K";
  status_shown_ = false;
  std::cout << s << std::endl;
  last_line_ = Clock::now();
}

void Progress::status(const std::string& s) {
  if (!tty_) return;
  auto now = Clock::now();
  if (now - last_status_ < std::chrono::milliseconds(100)) return;  // no flicker, no slowdown
  last_status_ = now;
  std::cout << "\r\033[K" << s.substr(0, 120) << std::flush;
  status_shown_ = true;
}

std::string Progress::running_text(Clock::time_point now) const {
  std::string s;
  for (const auto& [arm, r] : running_) {
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - r.since).count();
    s += (s.empty() ? "" : "; ") + arm + " " + r.what + " (" + std::to_string(secs) + " s)";
  }
  return s;
}

void Progress::heartbeat_loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, std::min<std::chrono::milliseconds>(heartbeat_, std::chrono::seconds(1)));
    if (stop_) break;
    const auto now = Clock::now();
    if (running_.empty() || now - last_line_ < heartbeat_) continue;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
    line("  ... " + std::to_string(secs) + " s in, still running: " + running_text(now));
  }
}

void Progress::skipped_lines() {
  for (const auto& [why, arms] : skipped_) {
    std::string names;
    for (const auto& a : arms) names += (names.empty() ? "" : ", ") + a;
    line("  " + names + ": skipped" + (why.empty() ? "" : ": " + why));
  }
  skipped_.clear();
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  skipped_lines();
  running_.clear();
  if (status_shown_) std::cout << "\r\033[K" << std::flush;
  status_shown_ = false;
}

void Progress::record(const nlohmann::json& j) {
  // The stages stream their records as JSON lines; each is read back into its struct here.
  std::lock_guard lock(mu_);
  if (rec::is<rec::VerdictRecord>(j)) return on(j.get<rec::VerdictRecord>());
  if (rec::is<rec::SanitizerFinding>(j)) return on(j.get<rec::SanitizerFinding>());
  if (rec::is<rec::CaseStart>(j)) return on(j.get<rec::CaseStart>());
  if (rec::is<rec::Waiting>(j)) return on(j.get<rec::Waiting>());
  if (rec::is<rec::SizeStart>(j)) return on(j.get<rec::SizeStart>());
  if (rec::is<rec::RoundSample>(j)) return on(j.get<rec::RoundSample>());
  if (rec::is<rec::SizeEnd>(j)) return on(j.get<rec::SizeEnd>());
  if (rec::is<rec::ArmSkip>(j)) return on(j.get<rec::ArmSkip>());
  if (rec::is<rec::Disturbed>(j)) return on(j.get<rec::Disturbed>());
  if (rec::is<rec::WorkerStart>(j)) return on(j.get<rec::WorkerStart>());
  if (rec::is<rec::Warmed>(j)) return on(j.get<rec::Warmed>());
  if (rec::is<rec::Recheck>(j)) return on(j.get<rec::Recheck>());
}

namespace {

std::string pass_of(const std::optional<std::string>& pass) {
  return pass ? " [" + *pass + "]" : "";
}

}  // namespace

void Progress::on(const rec::VerdictRecord& v) {
  const std::string key = v.arm + pass_of(v.pass);
  running_.erase(key);
  if (v.verdict == rec::Verdict::skipped && !v.pass) {
    skipped_[v.detail.value_or("")].push_back(v.arm);
    return;
  }
  std::string s = "  " + key + ": " + std::string(rec::to_string(v.verdict));
  if (v.counts)
    s += " (" + std::to_string(v.counts->passed) + " passed, " + std::to_string(v.counts->refused) +
         " refused, " + std::to_string(v.counts->failed) + " failed, " +
         std::to_string(v.counts->skipped) + " skipped)";
  // A check rejects; an arm not judged was stopped by what its check names (host_memory).
  if (v.check && !v.check->empty())
    s += (v.verdict == rec::Verdict::not_run ? " (" + *v.check + ")" : " by " + *v.check);
  if (v.case_name && !v.case_name->empty()) s += " in " + *v.case_name;
  if (v.detail && !v.detail->empty()) s += ": " + *v.detail;
  line(s);
}

void Progress::on(const rec::SanitizerFinding& f) {
  line("  " + f.arm + " [" + f.tool + "]: " + std::to_string(f.errors) + " error(s)" +
       (f.first.empty() ? "" : ": " + f.first));
}

void Progress::on(const rec::CaseStart& c) {
  const std::string key = c.arm + pass_of(c.pass);
  running_[key] = {c.case_name, Clock::now()};
  status("qualify " + key + "  " + c.case_name);
}

// A worker waiting before a case (its data still being computed beside the workers, or its
// turn at the device for a large one) says so every few seconds: shown as the wait since the
// first, not as the case before it running on, and what it waits for.
void Progress::on(const rec::Waiting& w) {
  const std::string key = w.arm + pass_of(w.pass);
  const std::string what =
      (w.turn ? "waiting for the device for " : "waiting for the data of ") + w.case_name;
  auto it = running_.find(key);
  if (it != running_.end() && it->second.what == what) return;
  running_[key] = {what, Clock::now()};
  status("qualify " + key + "  " + what);
}

void Progress::name_points(const std::map<std::int64_t, std::string>& points) {
  std::lock_guard lock(mu_);
  for (const auto& [size, name] : points)
    if (!name.empty()) points_[size] = name;
}

std::string Progress::where(std::int64_t size) const {
  auto p = points_.find(size);
  return p != points_.end() ? p->second : std::to_string(size) + " elements";
}

void Progress::on(const rec::SizeStart& s) {
  if (s.point) points_[s.size] = *s.point;
  if (worker_start_) {  // its arms' set-up follows the worker's start and its plugins' load
    double setup = 0;
    for (double t : s.arm_setup_s) setup += t;
    const double load =
        std::chrono::duration<double>(Clock::now() - *worker_start_).count() - setup;
    char text[120];
    std::snprintf(text, sizeof text,
                  worker_warmed_ ? "  the worker, started beside qualification, was ready %.1f s "
                                   "after qualification ended"
                                 : "  the worker started and loaded its arms in %.1f s",
                  load);
    line(text);
    worker_start_.reset();
  }
  slowest_setup_.clear();
  const std::size_t n = std::min(s.arm_setup_s.size(), s.arms.size());
  const auto slowest = std::max_element(s.arm_setup_s.begin(), s.arm_setup_s.begin() + n);
  if (slowest == s.arm_setup_s.begin() + n) return;
  char text[96];
  std::snprintf(text, sizeof text, "; slowest %s %.1f s",
                s.arms[static_cast<std::size_t>(slowest - s.arm_setup_s.begin())].c_str(),
                *slowest);
  slowest_setup_ = text;
}

void Progress::on(const rec::RoundSample& r) {
  const std::string size = where(r.size);
  const std::string what = size + ", round " + std::to_string(r.round);
  // Timing runs one arm at a time, interleaved: one entry, timed from the size's first sample.
  const auto at = running_.find("timing");
  const bool same_size = at != running_.end() && at->second.what.rfind(size + ",", 0) == 0;
  const Clock::time_point since = same_size ? at->second.since : Clock::now();
  running_.clear();
  running_["timing"] = {what + ", " + r.arm, since};
  status("time " + what + ", " + r.arm);
}

void Progress::on(const rec::SizeEnd& e) {
  running_.clear();
  char took[64];
  std::snprintf(took, sizeof took, " (%.1f s; set-up %.1f s", e.elapsed_s, e.setup_s.value_or(0));
  line("  " + where(e.size) + ": " + std::to_string(e.rounds) + " rounds, stopped by " +
       e.stopped_by + took + checks_text(e) + slowest_setup_ + ")");
}

void Progress::on(const rec::ArmSkip& k) {
  // Once per arm and reason: the sizes after the first say the same (the report lists each).
  if (!skips_said_.insert({k.arm, k.reason}).second) return;
  line("  " + k.arm + " not timed at " + where(k.size) + ": " + k.reason);
}

void Progress::on(const rec::Disturbed& d) {
  line("  the timing worker was DISTURBED at " + where(d.size) + ": " + d.what + " during " +
       d.arm + "'s profiled call; none of its arms is adopted");
}

void Progress::on(const rec::Warmed&) { worker_warmed_ = true; }

void Progress::on(const rec::WorkerStart& w) {
  worker_start_ = Clock::now();
  worker_warmed_ = false;
  if (w.label.empty()) {
    if (!w.arms.empty()) line(" clean worker: " + std::to_string(w.arms.size()) + " arm(s)");
    return;
  }
  line(" isolated worker " + w.label + " (" + w.reason + ": " + w.file + "): " + joined(w.arms) +
       (w.references.empty()
            ? ""
            : ", beside " + std::to_string(w.references.size()) + " reference(s)"));
}

void Progress::on(const rec::Recheck& r) {
  if (r.ok) return;
  line("  " + r.arm + " at " + where(r.size) +
       ": output of the timing loop is WRONG: " + r.message.value_or(""));
}

}  // namespace kq
