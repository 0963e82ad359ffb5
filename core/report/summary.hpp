// Reads a run directory (manifest.json, qualification.jsonl, rounds.jsonl) and condenses it:
// verdicts, statistics per arm and size, the decision. Works on a run that was killed half
// way: whatever was recorded is summarised and the gaps are named.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

nlohmann::json summarize_run(const std::filesystem::path& run_dir);

// Why a round or light record of rounds.jsonl is left out of the statistics, or "" when it is
// kept: "throttled" (its SM clock was below 75% of the run's usual clock, usual_clock_mhz) or
// "unheld" (its blocking kernel timed out, so the GPU may have waited for the host's enqueue).
std::string left_out_because(const nlohmann::json& record, double usual_clock_mhz);

}  // namespace kq
