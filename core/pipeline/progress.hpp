// What a run prints as it goes: one line per verdict and per timed size, always; and, on a
// terminal only, a status line rewritten in place (arm and case, or size, round and arm).
#pragma once
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

class Progress {
 public:
  Progress();
  void record(const nlohmann::json& j);
  void finish();  // clears the status line

 private:
  void line(const std::string& s);    // a permanent line
  void status(const std::string& s);  // the rewritten line (terminals only)
  bool tty_;
  bool status_shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace kq
