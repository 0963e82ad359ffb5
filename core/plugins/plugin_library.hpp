// Opening one plugin file and finding its two exports (and the optional ones). Boost.DLL stays
// behind this header: the library is handed out type-erased, so nothing above the loader sees a
// Boost type.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "kq/arm.hpp"
#include "kq/export.hpp"

namespace kq {

struct PluginLibrary {
  // Owns the boost::dll::shared_library; the library is unloaded when the last copy goes.
  std::shared_ptr<void> handle;
  std::uint32_t (*abi_version)() = nullptr;          // the kq_abi_version alias
  void (*create_arms)(ArmList&) = nullptr;           // the kq_create_arms alias
  void (*load_problems)(LoadProblems&) = nullptr;    // the optional kq_load_problems alias
  void (*environment)(EnvironmentFacts&) = nullptr;  // the optional kq_plugin_environment alias
};

struct OpenedPlugin {
  PluginLibrary library;  // set when `error` is empty
  std::string error;      // one line: why the file is not a usable plugin
};

// Loads `file` with immediate binding and local symbols, then reads both aliases. Calls nothing
// inside the plugin beyond its static initialisers (which dlopen runs).
OpenedPlugin open_plugin_library(const std::filesystem::path& file);

}  // namespace kq
