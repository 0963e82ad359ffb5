// Which arms the timing stage times together. Arms that share a process share an interpreter,
// a CUDA context and whatever a plugin's code did to them when it loaded, so an arm from outside
// kq's install, or a known-broken one, could slow the others down and win by it. Each such file
// (a plugin, or an arm file of a plugin that loads arms from files) is timed in a worker of its
// own, beside the references (the baseline and the eager arm, timed again there under the names
// "arm@label") and the controls; kq's own good arms and the references share the clean worker.
// Workers run one after another; each one's rounds interleave its arms as before.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "qualify/qualify_stage.hpp"

namespace kq {

struct IsolationPolicy {
  // kq's own plugin folder (plugins/ beside the kq binary): a plugin elsewhere is from outside.
  std::filesystem::path install_plugins;
  bool all = false;  // kq run --isolate all: every file but the references' in a worker of its own
  // The arms every worker times beside its own (the run's baseline and eager arm): the first of
  // each list that is among the arms.
  std::vector<std::string> baselines, eager;
};

struct TimingWorkerPlan {
  std::string label;                 // "" for the clean worker; else a name made from the file's
  std::string file;                  // the plugin or arm file an isolated worker holds
  std::string reason;                // why it is isolated
  std::vector<StageArm> arms;        // its own arms
  std::vector<StageArm> references;  // the references' instances, named "arm@label"
};

// The clean worker first (when it has arms), then one worker per isolated file in the order its
// first arm comes in `arms`. "arm#2" (kq run --twice) goes with arm.
std::vector<TimingWorkerPlan> plan_timing_workers(const std::vector<StageArm>& arms,
                                                  const IsolationPolicy& policy);

}  // namespace kq
