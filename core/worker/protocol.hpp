// The worker protocol's command lines: what the parent kq passes to `kq __worker-qualify` and
// `kq __worker-time`. Both sides encode and decode them here, so that a flag cannot be added on
// one side only. The records the workers write back are JSON lines (worker/supervise.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/shaped.hpp"

namespace kq {

inline constexpr const char* kWorkerQualifyMode = "__worker-qualify";
inline constexpr const char* kWorkerTimeMode = "__worker-time";

// A command line the parent did not write; the worker exits with bad usage.
struct WorkerArgsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One arm's qualification.
struct QualifyWorkerArgs {
  std::string spec;
  std::string plugin;
  std::string arm;
  bool quick = false;                      // smaller sizes only
  std::string artifacts_dir;               // empty: no artifacts written
  std::optional<double> hang_timeout;      // seconds; empty: the spec's
  std::vector<std::int64_t> timing_sizes;  // qualified too; empty: the spec's timing sizes
  // Format 2: points appended to the spec's timing points (kq run --points; add_timing_points in
  // plan/choose_points.hpp), which timing_sizes may number.
  std::vector<Point> added_points;
  // The cases' data the stage computes once (SharedCaseFeed::subscribe): those ready, by their
  // inherited sealed descriptors; those still coming, by size, with the inherited socket they
  // come on; empty: the worker computes every case's own.
  std::string case_data;
  // The file that defines the arm when its plugin loads arms from files (ArmIdentity::origin):
  // the worker's plugins load only the files named here (KQ_ARM_FILES, kq/arm.hpp).
  std::vector<std::string> origins;
  // One of several workers sharing the arm's cases (qualify/qualify_stage.hpp): the file through
  // which they take them a group at a time (qualify/case_claims.hpp); empty: every case.
  std::string claims;
  // The GPU to run on, as CUDA_VISIBLE_DEVICES names it (set before CUDA starts); empty: those
  // the worker inherits.
  std::string gpu;

  std::vector<std::string> to_argv() const;  // the arguments after the mode
  static QualifyWorkerArgs parse(const std::vector<std::string>& args);
};

// Every qualified arm's timing, in one worker.
struct TimeWorkerArgs {
  std::string spec;
  std::vector<std::string> plugins;  // the plugin of each arm, in the order of `arms`
  std::vector<std::string> arms;     // "arm#2": a second instance of arm
  std::vector<std::int64_t> sizes;   // empty: the spec's timing sizes
  std::vector<Point> added_points;   // as QualifyWorkerArgs's
  std::string artifacts_dir;         // empty: no artifacts written
  bool no_blocking_kernel = false;
  double cpu_call_budget_s = 0.05;   // TimingPolicy::cpu_call_budget_s
  bool brief = false;                // a few rounds per size (kq selftest)
  bool quick = false;                // kq run --quick: quick_timing() (timing/stopping.hpp)
  std::vector<std::string> origins;  // the arms' files, as QualifyWorkerArgs's
  // A worker started beside qualification (timing/early_worker.hpp): it warms its arms, then
  // reads from this descriptor the names of those to time, one a line, up to end of file.
  int roster_fd = -1;
  std::string gpu;  // as QualifyWorkerArgs's

  std::vector<std::string> to_argv() const;  // the arguments after the mode
  static TimeWorkerArgs parse(const std::vector<std::string>& args);
};

}  // namespace kq
