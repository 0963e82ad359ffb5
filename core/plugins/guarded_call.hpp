// Calls into plugin code. The contract says plugins never throw across the boundary; one that
// does must cost a line in the load report, not the run.
#pragma once
#include <exception>
#include <stdexcept>
#include <string>

#include "kq/status.hpp"
#include "plugins/one_line.hpp"

namespace kq {

// Runs `f` and returns "" when it returned, otherwise what it threw, worded to follow the name
// of the call: "threw: <what()>" or "threw a non-standard exception".
template <class F>
std::string guarded_call(F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return "threw: " + one_line(e.what());
  } catch (...) {
    return "threw a non-standard exception";
  }
}

// "run() returned error: why": what an arm's call said when it was not ok.
inline std::string returned(const std::string& call, const Status& st) {
  return call + " returned " + to_string(st.code()) + ": " + st.message();
}

// For calls that must succeed (set-up and timing): throws std::runtime_error when `st` is not ok.
inline void throw_unless_ok(const Status& st, const std::string& call) {
  if (!st.is_ok()) throw std::runtime_error(returned(call, st));
}

}  // namespace kq
