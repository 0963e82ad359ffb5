// A broken candidate's declared rejection: one check name, or several separated by '|'.
#pragma once
#include <string>
#include <string_view>

#include "kq/arm.hpp"

namespace kq {

// A known-broken candidate: the broken family, or any arm that declares the check that must
// reject it (a vendor variant known to be wrong, e.g. cudnn_pointwise_relu_fwd). Runs leave them
// out unless asked; the selftest counts them as candidates that must be rejected.
inline bool known_broken(std::string_view family, std::string_view expected_rejection) {
  return family == "broken" || !expected_rejection.empty();
}
inline bool known_broken(const ArmIdentity& id) {
  return known_broken(id.family, id.expected_rejection);
}

// Whether `check` is one of the alternatives in `expected` ("values|repeat_differs").
inline bool check_matches(std::string_view expected, std::string_view check) {
  while (!expected.empty()) {
    auto bar = expected.find('|');
    if (expected.substr(0, bar) == check) return true;
    if (bar == std::string_view::npos) break;
    expected.remove_prefix(bar + 1);
  }
  return false;
}

// Whether a verdict record shows a broken candidate caught by its declared check.
inline bool caught_as_declared(std::string_view verdict, std::string_view check,
                               std::string_view expected) {
  const bool failed = verdict == "rejected" || verdict == "crashed" || verdict == "hung";
  return failed && (expected.empty() || check_matches(expected, check));
}

}  // namespace kq
