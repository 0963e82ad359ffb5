// Reads a run directory (manifest.json, qualification.jsonl, rounds.jsonl) and condenses it:
// verdicts, statistics per arm and size, the decision. Works on a run that was killed half
// way: whatever was recorded is summarised and the gaps are named.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

nlohmann::json summarize_run(const std::filesystem::path& run_dir);

}  // namespace kq
