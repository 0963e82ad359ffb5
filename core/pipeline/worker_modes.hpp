// The worker modes, once their command lines are read (worker/protocol.hpp): the parent kq starts
// these in child processes and reads their JSON lines, so that an arm that crashes, corrupts its
// CUDA context or hangs takes only its worker down.
#pragma once
#include "worker/protocol.hpp"

namespace kq {

// One arm's qualification records and verdict; false when the worker itself failed (reported as
// a "crashed" verdict with check "worker_error").
bool worker_qualify(const QualifyWorkerArgs& args);

// Every arm's timing records, then {"type":"done"}; throws when an arm cannot be loaded.
void worker_time(const TimeWorkerArgs& args);

}  // namespace kq
