// summary.json: a run condensed once, from its typed records (record/run_data.hpp): the arms and
// their verdicts, the timing per size and arm, the flags and the decision. Every report is a
// printer of it (report/columns.hpp says how each timing column is formatted). Works on a run
// that was killed half way: whatever was recorded is summarised and the gaps are named.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "record/run_data.hpp"

namespace kq {

nlohmann::json summarize(const RunData& run);

// summarize(read_run(run_dir))
nlohmann::json summarize_run(const std::filesystem::path& run_dir);

// What the headline's counts leave out, for the line that gives them: " (N more skipped: see
// the arms' rows)", or nothing when no in-contract case of a good arm was skipped.
std::string skipped_note(const nlohmann::json& headline);

}  // namespace kq
