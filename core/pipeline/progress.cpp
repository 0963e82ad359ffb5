#include "pipeline/progress.hpp"

#include <unistd.h>

#include <iostream>

#include "record/records.hpp"

namespace kq {

Progress::Progress() : tty_(isatty(STDOUT_FILENO) == 1), last_(std::chrono::steady_clock::now()) {}

void Progress::line(const std::string& s) {
  if (status_shown_) std::cout << "\r\033[K";
  status_shown_ = false;
  std::cout << s << std::endl;
}

void Progress::status(const std::string& s) {
  if (!tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(100)) return;  // no flicker, no slowdown
  last_ = now;
  std::cout << "\r\033[K" << s.substr(0, 120) << std::flush;
  status_shown_ = true;
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
  skipped_lines();
  if (status_shown_) std::cout << "\r\033[K" << std::flush;
  status_shown_ = false;
}

void Progress::record(const nlohmann::json& j) {
  const std::string_view type = rec::type_of(j);
  const std::string pass = j.contains("pass") ? " [" + j.value("pass", "") + "]" : "";
  if (type == rec::VerdictRecord::kType && j.value("verdict", "") == "skipped" && pass.empty()) {
    skipped_[j.value("detail", "")].push_back(j.value("arm", ""));
  } else if (type == rec::VerdictRecord::kType) {
    std::string s = "  " + j.value("arm", "") + pass + ": " + j.value("verdict", "");
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
    line("  " + j.value("arm", "") + " [" + j.value("tool", "") +
         "]: " + std::to_string(j.value("errors", -1L)) + " error(s)" +
         (j.value("first", "").empty() ? "" : ": " + j.value("first", "")));
  } else if (type == rec::CaseStart::kType) {
    status("qualify " + j.value("arm", "") + pass + "  " + j.value("case", ""));
  } else if (type == rec::RoundSample::kType) {
    status("time " + std::to_string(j.value("size", 0LL)) + " elements, round " +
           std::to_string(j.value("round", 0)) + ", " + j.value("arm", ""));
  } else if (type == rec::SizeEnd::kType) {
    line("  " + std::to_string(j.value("size", 0LL)) + " elements: " +
         std::to_string(j.value("rounds", 0)) + " rounds, stopped by " + j.value("stopped_by", ""));
  } else if (type == rec::ArmSkip::kType) {
    line("  " + j.value("arm", "") + " not timed at " + std::to_string(j.value("size", 0LL)) +
         ": " + j.value("reason", ""));
  } else if (type == rec::Recheck::kType && !j.value("ok", true)) {
    line("  " + j.value("arm", "") + " at " + std::to_string(j.value("size", 0LL)) +
         ": output of the timing loop is WRONG: " + j.value("message", ""));
  }
}

}  // namespace kq
