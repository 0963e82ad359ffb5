// Plugin discovery and loading (Boost.DLL). Every failure becomes one LoadError line; loading
// goes on with the other plugins.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kq/arm.hpp"
#include "kq/export.hpp"

namespace kq {

// One arm and the library that holds its code. The arm is destroyed before the library is
// unloaded (the member order below guarantees it).
struct LoadedArm {
  std::shared_ptr<void> library;  // keeps the shared object loaded
  std::filesystem::path plugin_file;
  ArmIdentity identity;
  std::unique_ptr<IKernelArm> arm;
  // What loading its plugin left running ("1 thread(s) still running (name)"), or "". Looked for
  // in plugins that define their arms in code (no ArmIdentity::origin): a plugin that loads arm
  // files (the python plugin) names a thread an arm file starts as that file's tampering.
  std::string load_threads;

  LoadedArm() = default;
  LoadedArm(LoadedArm&&) = default;
  LoadedArm& operator=(LoadedArm&&) = default;
  ~LoadedArm() { arm.reset(); }
};

struct LoadError {
  std::filesystem::path file;
  std::string message;  // one line: what failed and why
};

// What a loaded plugin reported of its environment (its optional kq_plugin_environment export).
struct PluginEnvironment {
  std::filesystem::path file;
  EnvironmentFacts facts;  // in the plugin's order; keys and values one line each
};

struct PluginSet {
  std::vector<LoadedArm> arms;  // sorted by name
  std::vector<LoadError> errors;
  std::vector<PluginEnvironment> environments;  // of the plugins that loaded, in load order
  std::vector<std::filesystem::path> searched;  // directories looked in, in order (absent ones too)
};

struct PluginSearch {
  std::vector<std::filesystem::path> dirs;   // every *.so inside is a candidate
  std::vector<std::filesystem::path> files;  // explicit plugin files
  // Entries of `dirs` that may be absent without an error: the default folder beside the binary.
  // A folder the user named (--plugin-dir, KQ_PLUGIN_PATH) that does not exist is a LoadError.
  std::vector<std::filesystem::path> may_be_absent;
};

// The search the command line uses: --plugin-dir dirs (or, when none is given, the "plugins"
// folder beside the kq binary), then every directory in KQ_PLUGIN_PATH (':'-separated), then
// --plugin files.
PluginSearch default_plugin_search(const std::filesystem::path& exe_dir,
                                   const std::vector<std::filesystem::path>& cli_dirs,
                                   const std::vector<std::filesystem::path>& cli_files);

PluginSet load_plugins(const PluginSearch& search);

}  // namespace kq
