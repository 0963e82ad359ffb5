// The two halves of summarize() (report/summary.hpp), each in its own file.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "decision/decide.hpp"
#include "record/run_data.hpp"

namespace kq {

// The arms' rows (manifest order, verdicts, sanitizer findings, artifacts), the declined and
// skipped groups and the headline, into s["arms"], s["declined"], s["skipped"], s["headline"].
// Returns the arms that the timing checks rejected after they qualified, and the check.
std::map<std::string, std::string> summarize_arms(const RunData& run, nlohmann::json& s);

// Timing rows per size, the light, skips, flags and notes, then the decision. `not_adopted`:
// the arms the timing checks rejected (summarize_arms' result).
void summarize_timing(const RunData& run, const std::map<std::string, std::string>& not_adopted,
                      nlohmann::json& s);

}  // namespace kq
