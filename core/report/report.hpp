// Reports in a run directory, from what the run recorded: summary.json, report.md, report.html
// (the same tables and plots, self-contained), rounds.csv (every sample) and junit.xml.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

std::string render_markdown(const nlohmann::json& summary);

// " (bf16, computed in f32)", " (f32)", or "" for runs that did not record their dtype: what
// the reports' titles add to the op's name.
std::string element_types(const nlohmann::json& summary);

// Summarises the run directory and writes summary.json, report.md, report.html, rounds.csv and
// junit.xml; returns the summary.
nlohmann::json write_report(const std::filesystem::path& run_dir);

}  // namespace kq
