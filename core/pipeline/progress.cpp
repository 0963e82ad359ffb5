#include "pipeline/progress.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "record/records.hpp"

namespace kq {

namespace {

// KQ_HEARTBEAT_MS, where set to a positive number (tests), else `fallback`.
std::chrono::milliseconds heartbeat_from_env(std::chrono::milliseconds fallback) {
  const char* v = std::getenv("KQ_HEARTBEAT_MS");
  const long ms = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
  return ms > 0 ? std::chrono::milliseconds(ms) : fallback;
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
  std::lock_guard lock(mu_);
  const std::string_view type = rec::type_of(j);
  const std::string arm = j.value("arm", "");
  const std::string pass = j.contains("pass") ? " [" + j.value("pass", "") + "]" : "";
  if (type == rec::VerdictRecord::kType) running_.erase(arm + pass);
  if (type == rec::VerdictRecord::kType && j.value("verdict", "") == "skipped" && pass.empty()) {
    skipped_[j.value("detail", "")].push_back(arm);
  } else if (type == rec::VerdictRecord::kType) {
    std::string s = "  " + arm + pass + ": " + j.value("verdict", "");
    if (j.contains("counts")) {
      const auto& c = j["counts"];
      s += " (" + std::to_string(c.value("passed", 0)) + " passed, " +
           std::to_string(c.value("refused", 0)) + " refused, " +
           std::to_string(c.value("failed", 0)) + " failed, " +
           std::to_string(c.value("skipped", 0)) + " skipped)";
    }
    if (!j.value("check", "").empty()) s += " by " + j.value("check", "");
    if (!j.value("case", "").empty()) s += " in " + j.value("case", "");
    if (!j.value("detail", "").empty()) s += ": " + j.value("detail", "");
    line(s);
  } else if (type == rec::SanitizerFinding::kType) {
    line("  " + arm + " [" + j.value("tool", "") + "]: " + std::to_string(j.value("errors", -1L)) +
         " error(s)" + (j.value("first", "").empty() ? "" : ": " + j.value("first", "")));
  } else if (type == rec::CaseStart::kType) {
    running_[arm + pass] = {j.value("case", ""), Clock::now()};
    status("qualify " + arm + pass + "  " + j.value("case", ""));
  } else if (type == rec::RoundSample::kType) {
    const std::string size = std::to_string(j.value("size", 0LL)) + " elements";
    const std::string what = size + ", round " + std::to_string(j.value("round", 0));
    // Timing runs one arm at a time, interleaved: one entry, timed from the size's first sample.
    const auto at = running_.find("timing");
    const bool same_size = at != running_.end() && at->second.what.rfind(size + ",", 0) == 0;
    const Clock::time_point since = same_size ? at->second.since : Clock::now();
    running_.clear();
    running_["timing"] = {what + ", " + arm, since};
    status("time " + what + ", " + arm);
  } else if (type == rec::SizeEnd::kType) {
    running_.clear();
    line("  " + std::to_string(j.value("size", 0LL)) + " elements: " +
         std::to_string(j.value("rounds", 0)) + " rounds, stopped by " + j.value("stopped_by", ""));
  } else if (type == rec::ArmSkip::kType) {
    line("  " + arm + " not timed at " + std::to_string(j.value("size", 0LL)) + ": " +
         j.value("reason", ""));
  } else if (type == rec::Recheck::kType && !j.value("ok", true)) {
    line("  " + arm + " at " + std::to_string(j.value("size", 0LL)) +
         ": output of the timing loop is WRONG: " + j.value("message", ""));
  }
}

}  // namespace kq
