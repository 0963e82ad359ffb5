// The command line and log of one timing worker (timing/time_stage.hpp), shared by the workers
// the stage starts and the one started beside qualification (timing/early_worker.hpp).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "timing/time_stage.hpp"

namespace kq {

// kq in timing-worker mode for `plan`'s references and arms; roster_fd >= 0: the descriptor it
// reads its roster from (worker/roster.hpp).
std::vector<std::string> worker_command(const TimingWorkerPlan& plan, const TimeStageOptions& opt,
                                        int roster_fd = -1);

// Where its stderr goes: the clean worker's opt.log_file, time-<label>.log beside it otherwise.
std::filesystem::path worker_log(const TimingWorkerPlan& plan, const TimeStageOptions& opt);

// Every arm's name in `arms`.
std::vector<std::string> names_of(const std::vector<StageArm>& arms);

}  // namespace kq
