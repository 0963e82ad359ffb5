// Calls into plugin code. The contract says plugins never throw across the boundary; one that
// does must cost a line in the load report, not the run.
#pragma once
#include <exception>
#include <string>

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

}  // namespace kq
