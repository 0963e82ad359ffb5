// Reports: summary.json and report.md in a run directory, from what the run recorded.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

std::string render_markdown(const nlohmann::json& summary);

// Summarises the run directory and writes summary.json and report.md; returns the summary.
nlohmann::json write_report(const std::filesystem::path& run_dir);

// "738 us", "4.1 ms", "12 ns"
std::string format_seconds(double s);

}  // namespace kq
