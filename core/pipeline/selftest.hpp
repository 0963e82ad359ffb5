// kq selftest once its options are read: every arm through qualification on every spec, then
// what qualified through a brief timing at one size (the timing checks). It passes only when
// each broken candidate is rejected by the check it declares wherever it runs, and each good arm
// qualifies, passes the timing checks and is not flagged wherever it runs. Prints as it goes on
// stdout and writes selftest.json.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugins/loader.hpp"
#include "qualify/qualify_stage.hpp"
#include "qualify/sanitize_setup.hpp"
#include "spec/spec.hpp"

namespace kq {

struct SelftestOptions {
  std::vector<std::string> command_line;  // recorded in each spec's manifest
  std::vector<Spec> specs;
  std::vector<StageArm> arms;
  std::vector<LoadError> load_errors;  // the plugins that did not load, for the manifests
  std::vector<PluginEnvironment> plugin_environment;  // what the plugins said they run on
  nlohmann::json machine;                             // device/device_info.hpp
  std::filesystem::path dir;  // made and empty: one run directory per spec inside

  bool quick = false;          // qualify on the smaller sizes only
  double hang_timeout_s = 30;  // seconds a case may run silently
  int jobs = 1;                // arms qualified at once
  SanitizeSetup sanitize;
  bool no_timing = false;  // qualify only
  // Timed (and qualified) on every spec in full, as kq run --sizes; empty: the brief timing of
  // one size per spec, enough for the timing checks.
  std::vector<std::int64_t> sizes;
  // Over the shipped specs every broken candidate must take one of them (a candidate that
  // drifted to decline everything would never be rejected); over a folder of the user's, a
  // candidate for other specs is only shown.
  bool shipped_specs = true;
};

struct SelftestResult {
  int broken_rejected = 0, broken_total = 0, good_qualified = 0, good_total = 0;
  bool passed() const { return broken_rejected == broken_total && good_qualified == good_total; }
};

SelftestResult selftest(const SelftestOptions& options);

}  // namespace kq
