// The run directory: runs/<date>-<time>-<op>-<machine>/ with
//   manifest.json       kq version, git commit and dirty flag, the spec (copy and hash), the
//                       machine, every arm's identity, the command line
//   spec.yaml           the exact spec the run used (workers read this copy)
//   qualification.jsonl every case result and verdict, as they happen
//   rounds.jsonl        every timing sample, as it happens
//   logs/               workers' stderr
//   report.md, summary.json
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kq {

// Creates a fresh run directory under `runs_root` (or exactly `explicit_dir` when not empty;
// it must not exist or be empty). Throws std::runtime_error when it cannot.
std::filesystem::path create_run_dir(const std::filesystem::path& runs_root,
                                     const std::filesystem::path& explicit_dir,
                                     const std::string& op, const std::string& machine);

}  // namespace kq
