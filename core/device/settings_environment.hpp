// The environment variables that change what an arm computes or how fast it runs, as a run
// found them: kq's own settings, Inductor's, Triton's, CUDA's and its libraries', the thread
// pools', and what decides which code loads (LD_PRELOAD, LD_LIBRARY_PATH, PYTHONPATH). Kept in
// the manifest with the machine, so that a run says what it ran under, and a campaign whose
// tasks ran under different settings says so (campaign/merge.hpp).
#pragma once
#include <map>
#include <string>

namespace kq {

// From `envp` (environ's layout: "NAME=value" strings, null-terminated), the variables whose
// name is one of kSettingsNames or starts with one of kSettingsPrefixes, less those kq sets
// itself for each run or worker (CUDA_VISIBLE_DEVICES, recorded apart, and KQ_ARM_FILES,
// KQ_BIG_CASE_*, KQ_PYTHON_ARMS: the command line says those).
std::map<std::string, std::string> settings_environment(const char* const* envp);

// The same from this process's environment.
std::map<std::string, std::string> settings_environment();

}  // namespace kq
