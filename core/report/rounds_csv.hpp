// rounds.csv: every timing sample of rounds.jsonl (the round records) as CSV, for spreadsheets
// and plotting tools. Columns: arm,size,mode,round,seconds, then every further field the
// samples carry (checked, held, host_seconds, launches, sm_clock_mhz, and left_out: why the
// summary leaves the sample out, by the reader's rules) in alphabetical order; a field a sample
// lacks is an empty cell.
#pragma once
#include <string>

#include "record/run_data.hpp"

namespace kq {

std::string render_rounds_csv(const RunData& run);

}  // namespace kq
