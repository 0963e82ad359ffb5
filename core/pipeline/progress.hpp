// What a run prints as it goes: one line per verdict and per timed size, always; and, on a
// terminal only, a status line rewritten in place (arm and case, or size, round and arm).
#pragma once
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

class Progress {
 public:
  Progress();
  void record(const nlohmann::json& j);
  // Prints the arms skipped so far, one line per reason, and clears the status line.
  void finish();

 private:
  void line(const std::string& s);    // a permanent line
  void status(const std::string& s);  // the rewritten line (terminals only)
  void skipped_lines();               // the skipped arms, one line per reason
  bool tty_;
  bool status_shown_ = false;
  std::chrono::steady_clock::time_point last_;
  // Arms skipped for want of a device, by reason: one line each at finish(), not one per arm.
  std::map<std::string, std::vector<std::string>> skipped_;
};

}  // namespace kq
