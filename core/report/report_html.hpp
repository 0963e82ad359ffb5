// report.html: the tables of report.md and plots of the timing, in one self-contained file
// (Chart.js and the data are inline; no network). Plots: time against size per arm (log-log,
// median and min), % of the speed of light (GB/s when the light was not measured), every round
// per arm and size, and the speed-up against the baseline with its 95% bootstrap interval.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/run_data.hpp"

namespace kq {

// summary: summarize(run)'s result; run: the samples the page plots (its round and light samples,
// marked as the reader's rules leave them out). Once the page's script has drawn every plot it
// appends <div id="kq-plots-ready" data-count="N" data-charts="M" hidden> (N plots, M Chart.js
// charts); when a plot fails it shows #kq-plots-error instead.
std::string render_html(const nlohmann::json& summary, const RunData& run);

}  // namespace kq
