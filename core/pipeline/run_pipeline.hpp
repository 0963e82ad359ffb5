// kq run and kq qualify once their options are read: qualify the arms in isolated workers,
// (run:) time the qualified ones, then write the report and decide. Prints as it goes on stdout.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/choose_points.hpp"
#include "plugins/loader.hpp"
#include "qualify/qualify_stage.hpp"
#include "qualify/sanitize_setup.hpp"
#include "spec/spec.hpp"

namespace kq {

struct RunPipelineOptions {
  std::string command;                    // "run" or "qualify", as printed
  std::vector<std::string> command_line;  // recorded in the manifest
  Spec spec;  // format 2: with timed.added among its timing points (add_timing_points)
  std::vector<StageArm> arms;
  std::vector<LoadError> load_errors;  // the plugins that did not load, for the manifest
  std::vector<PluginEnvironment> plugin_environment;  // what the plugins said they run on
  nlohmann::json machine;                             // device/device_info.hpp
  std::filesystem::path dir;                          // the run directory, made and empty

  bool quick = false;                     // qualify on the smaller sizes only
  std::vector<std::string> left_out_cpu;  // CPU arms --quick left out on a GPU host (cli/cmd_run)
  std::optional<double> hang_timeout_s;   // empty: the spec's
  int jobs = 1;                           // arms qualified at once
  // kq run --devices: qualification's CUDA workers spread over these, the timing on the first;
  // empty: every worker on what kq was started with.
  std::vector<GpuSlot> gpus;
  SanitizeSetup sanitize;
  std::filesystem::path junit;  // empty: no copy of junit.xml

  bool timing = false;     // kq run: time what qualified, and decide
  bool no_timing = false;  // kq run --no-timing: qualify only (the decision says so)
  std::string twice;       // an arm to time a second time, as ARM#2; empty: none
  // Timed (and qualified) instead of the spec's sizes or points (--sizes, --points); empty:
  // those. kq qualify qualifies them.
  TimingChoice timed;
  bool blocking_kernel = true;
  double cpu_call_budget_s = 0.05;  // TimingPolicy::cpu_call_budget_s
  bool isolate_all = false;         // kq run --isolate all (timing/timing_workers.hpp)
  bool early_timing = false;        // the clean timing worker starts beside qualification
};

struct RunPipelineResult {
  // An arm failed qualification (rejected, crashed or hung), was rejected while timed or failed
  // its recheck, or the timing stage stopped early.
  bool candidate_failed = false;
};

RunPipelineResult run_pipeline(const RunPipelineOptions& options);

}  // namespace kq
