// rounds.csv: every timing sample of rounds.jsonl (the records of type "round") as CSV, for
// spreadsheets and plotting tools. Columns: arm,size,mode,round,seconds, then every further
// field the round records carry (sm_clock_mhz, throttled, ...) in alphabetical order; a field a
// record lacks is an empty cell.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

std::string render_rounds_csv(const std::vector<nlohmann::json>& rounds);

}  // namespace kq
