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
#pragma once
#include <cstdint>

#include "kq/abi.hpp"
#include "kq/arm.hpp"

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
