// JUnit XML of a run's qualification, for CI systems: one testsuite per arm holding a
// "verdict" testcase (failed when a good arm is not qualified, or a broken candidate is not
// caught by its declared check) and, for good arms, one testcase per case.
#pragma once
#include <filesystem>
#include <string>

namespace kq {

std::string render_junit(const std::filesystem::path& run_dir);

}  // namespace kq
