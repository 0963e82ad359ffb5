// A command run to its end with its standard output captured (sbatch, sacct): the scheduler's
// tools are programs, never linked.
#pragma once
#include <string>
#include <vector>

namespace kq::campaign {

struct CommandResult {
  int exit_code = -1;  // -1: it could not start or died of a signal
  std::string out;     // stdout and stderr together
};

CommandResult run_command(const std::vector<std::string>& argv);

}  // namespace kq::campaign
