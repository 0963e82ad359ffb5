// The summary stage: a run directory's typed records (record/run_data.hpp) condensed once into a
// RunSummary (summary/run_summary.hpp): the arms and their verdicts, the timing per size and arm,
// the flags, and the decision (decision/decide.hpp) with its sentence. Works on a run that was
// killed half way: whatever was recorded is summarised and the gaps are named.
//
// May include: record/, decision/, qualify/expectation.hpp, stats/. Never report/ (its printers
// come after it) nor any stage before the records.
#pragma once
#include <filesystem>
#include <string>

#include "record/run_data.hpp"
#include "summary/run_summary.hpp"

namespace kq {

RunSummary summarize(const RunData& run);

// summarize(read_run(run_dir))
RunSummary summarize_run(const std::filesystem::path& run_dir);

// What the headline's counts leave out, for the line that gives them: " (N more skipped: see
// the arms' rows)", or nothing when no in-contract case of a good arm was skipped.
std::string skipped_note(const Headline& headline);

}  // namespace kq
