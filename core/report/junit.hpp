// JUnit XML of a run's qualification, for CI systems: one testsuite per arm holding a
// "verdict" testcase (failed when a good arm is not qualified, or a broken candidate is not
// caught by its declared check) and, for good arms, one testcase per case.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "record/run_data.hpp"

namespace kq {

// summary: summarize(run)'s result, whose arms carry the verdicts (the timing checks' included);
// run: the cases of each good arm.
std::string render_junit(const nlohmann::json& summary, const RunData& run);

}  // namespace kq
