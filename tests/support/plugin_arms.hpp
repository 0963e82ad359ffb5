// Arms of kq's own plugins for tests, loaded through kq's loader (Boost.DLL) from the plugins
// folder beside the kq binary. Each plugin is loaded once and kept for the whole process: the
// arms' code lives in it.
#pragma once
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "plugins/loader.hpp"
#include "test_support.hpp"

namespace kq::test {

inline std::filesystem::path plugin_file(const std::string& plugin) {
  return bin_dir() / "plugins" / ("lib" + plugin + ".so");
}

// A fresh set of the plugin's arms (new instances, nothing prepared); load errors are printed.
inline PluginSet load_plugin(const std::string& plugin) {
  PluginSet set = load_plugins({{}, {plugin_file(plugin)}});
  for (const auto& e : set.errors) MESSAGE("cannot load " << e.file << ": " << e.message);
  return set;
}

// The arm `name` of `plugin` (e.g. "kq_cuda_fused"), or nullptr when there is none.
inline IKernelArm* plugin_arm(const std::string& plugin, const std::string& name) {
  static std::map<std::string, PluginSet> loaded;
  auto it = loaded.find(plugin);
  if (it == loaded.end()) it = loaded.emplace(plugin, load_plugin(plugin)).first;
  for (auto& a : it->second.arms)
    if (a.identity.name == name) return a.arm.get();
  return nullptr;
}

}  // namespace kq::test
