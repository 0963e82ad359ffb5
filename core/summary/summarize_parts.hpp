// The two halves of summarize() (summary/summarize.hpp), each in its own file.
#pragma once
#include <map>
#include <string>

#include "record/run_data.hpp"
#include "summary/run_summary.hpp"

namespace kq {

// The arms' rows (manifest order, verdicts, sanitizer findings, artifacts), the declined and
// skipped groups and the headline. Returns the arms that the timing checks rejected after they
// qualified, and why.
std::map<std::string, std::string> summarize_arms(const RunData& run, RunSummary& s);

// Timing rows per size, the light, skips, flags and notes, then the decision. `not_adopted`:
// the arms the timing checks rejected (summarize_arms' result).
void summarize_timing(const RunData& run, const std::map<std::string, std::string>& not_adopted,
                      RunSummary& s);

// The isolated timing workers (record/run_data.hpp), each one's references (the clean names of
// the baseline and the eager arm it was weighed against) and controls compared with the clean
// worker's by size. The arms of a disturbed worker, or of one that stopped, go into
// `not_adopted`, with why.
std::vector<WorkerRow> summarize_workers(const RunData& run,
                                         const std::vector<std::string>& references,
                                         std::map<std::string, std::string>& not_adopted);

}  // namespace kq
