// Exporting arms from a plugin.
//
//   static void make_arms(kq::ArmList& out) { out.push_back(std::make_unique<MyArm>()); }
//   KQ_EXPORT_ARMS(make_arms)
//
// The macro emits two Boost.DLL aliases (an exported pointer variable named after the alias,
// in the "boostdll" section, exactly as BOOST_DLL_ALIAS lays them out) without including Boost:
//   kq_abi_version -> std::uint32_t (*)()      returns kq::kAbiVersion as this plugin saw it
//   kq_create_arms -> void (*)(kq::ArmList&)   appends this plugin's arms
// The host reads them with boost::dll::shared_library::get_alias.
//
// Optionally, what the plugin could not load of its own (a file of arms that does not import),
// read by the host after kq_create_arms and listed with the plugins that failed to load:
//   static void problems(kq::LoadProblems& out) { out.push_back({file, "line 3: ..."}); }
//   KQ_EXPORT_LOAD_PROBLEMS(problems)
// emits kq_load_problems -> void (*)(kq::LoadProblems&). A plugin without it has none.
//
// Optionally, what the plugin runs on that its arms' identities do not say (which Python,
// torch and Triton), read by the host after kq_create_arms and written to the run's
// manifest.json under "plugin_environment", keyed by the plugin's file name, and to kq list:
//   static void environment(kq::EnvironmentFacts& out) { out.push_back({"torch", "2.11.0"}); }
//   KQ_EXPORT_ENVIRONMENT(environment)
// emits kq_plugin_environment -> void (*)(kq::EnvironmentFacts&). A plugin without it reports
// nothing. Neither optional export changes the ABI version (kq/abi.hpp): a plugin built before
// one existed lacks its alias and is read as before, and a host that does not know one never
// looks for it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kq/abi.hpp"
#include "kq/arm.hpp"

namespace kq {
struct LoadProblem {
  std::string file;     // what could not be loaded
  std::string message;  // one line: where and why
};
using LoadProblems = std::vector<LoadProblem>;

struct EnvironmentFact {
  std::string key;    // "python", "torch", ...
  std::string value;  // one line: "3.12.3 (main, ...)", "2.11.0+cu130", "absent"
};
using EnvironmentFacts = std::vector<EnvironmentFact>;
}  // namespace kq

namespace kq::detail {
inline std::uint32_t plugin_abi_version() { return kAbiVersion; }
}  // namespace kq::detail

// Declared extern "C" first, then defined (as BOOST_DLL_ALIAS does): a single `extern "C" T x =
// init;` is valid but makes GCC warn "initialized and declared 'extern'" in every plugin.
#define KQ_PLUGIN_ALIAS_(symbol, alias_name)                                \
  extern "C" __attribute__((visibility("default"))) const void* alias_name; \
  __attribute__((section("boostdll"), weak)) const void* alias_name =       \
      reinterpret_cast<const void*>(reinterpret_cast<std::intptr_t>(&symbol));

#define KQ_EXPORT_ARMS(create_fn)                                    \
  namespace {                                                        \
  void kq_create_arms_impl_(::kq::ArmList& out) { create_fn(out); }  \
  }                                                                  \
  KQ_PLUGIN_ALIAS_(::kq::detail::plugin_abi_version, kq_abi_version) \
  KQ_PLUGIN_ALIAS_(kq_create_arms_impl_, kq_create_arms)

#define KQ_EXPORT_LOAD_PROBLEMS(problems_fn)                                 \
  namespace {                                                                \
  void kq_load_problems_impl_(::kq::LoadProblems& out) { problems_fn(out); } \
  }                                                                          \
  KQ_PLUGIN_ALIAS_(kq_load_problems_impl_, kq_load_problems)

#define KQ_EXPORT_ENVIRONMENT(environment_fn)                                            \
  namespace {                                                                            \
  void kq_plugin_environment_impl_(::kq::EnvironmentFacts& out) { environment_fn(out); } \
  }                                                                                      \
  KQ_PLUGIN_ALIAS_(kq_plugin_environment_impl_, kq_plugin_environment)
