// Worker modes: `kq __worker-qualify` and `kq __worker-time`, started by the parent kq. Their
// command lines are read by worker/protocol.hpp and their work is done by
// pipeline/worker_modes.hpp.
#include "cli/common.hpp"
#include "pipeline/worker_modes.hpp"
#include "worker/protocol.hpp"

namespace kq::cli {
namespace {

template <typename Args>
Args parse_worker_args(const std::vector<std::string>& args, const char* mode) {
  try {
    return Args::parse(args);
  } catch (const WorkerArgsError& e) {
    throw UsageError(std::string("kq ") + mode + " (internal): " + e.what());
  }
}

}  // namespace

int cmd_worker_qualify(const std::vector<std::string>& args) {
  auto a = parse_worker_args<QualifyWorkerArgs>(args, kWorkerQualifyMode);
  return worker_qualify(a) ? kOk : kInternal;
}

int cmd_worker_time(const std::vector<std::string>& args) {
  worker_time(parse_worker_args<TimeWorkerArgs>(args, kWorkerTimeMode));
  return kOk;
}

}  // namespace kq::cli
