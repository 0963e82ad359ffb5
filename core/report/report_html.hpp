// report.html: the tables of report.md and plots of the timing, in one self-contained file
// (Chart.js and the data are inline; no network). Plots: time against size per arm (log-log,
// median and min), % of the speed of light (GB/s when the light was not measured), every round
// per arm and size, and the speed-up against the baseline with its 95% bootstrap interval.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

// summary: summarize_run()'s result; rounds: the records of rounds.jsonl (every type; the page
// keeps the "round" and "light" ones). Once the page's script has drawn every plot it appends
// <div id="kq-plots-ready" data-count="N" data-charts="M" hidden> (N plots, M Chart.js charts);
// when a plot fails it shows #kq-plots-error instead.
std::string render_html(const nlohmann::json& summary, const std::vector<nlohmann::json>& rounds);

}  // namespace kq
