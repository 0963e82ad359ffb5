// The timing stage, in the worker that runs it: every qualified arm at every timing size,
// interleaved in a freshly shuffled order each round, each sample a single call (or a graph
// replay) preceded by the spec's L2 policy. Every sample is emitted as it is taken.
//
// What is timed is what was qualified: each sample runs on an output poisoned after the set's
// previous sample; a random subset of samples (timing/output_checks.hpp) and a closing round
// are compared against the reference; a graph is replayed once on a poisoned output and
// compared before it is timed; after the rounds, one call is profiled under CUPTI and must keep
// to its stream (device/stream_discipline.hpp). A failed check rejects the arm for the rest of
// the run.
//
// Records (JSON, "type" first):
//   {"type":"size_start","size","arms":[...],"l2","check_seed"}
//   {"type":"arm_skip","arm","size","reason"[,"mode":"graph"]}  could not be set up or captured
//   {"type":"graph","arm","size","launches","kernel_nodes","work_nodes"}  the captured graph
//   {"type":"light","size","round","seconds","bytes"}   the device copy (speed of light)
//   {"type":"round","arm","size","mode","round","seconds"[,"checked":true]}
//   {"type":"timing_reject","arm","size","mode","round","check","message"[,"index","expected",
//    "got"]}                                            check: timing_output, graph_output or
//                                                       wrong_stream (round -1: not a sample)
//   {"type":"size_end","size","rounds","stopped_by","elapsed_s"}
//   {"type":"recheck","arm","size","ok","checked"[,"message"]}  the size's outputs, summed up
//   {"type":"profile","arm","size","kernels","kernel_seconds","memcpys","memsets","list",
//    "stream_id","off_stream"}                          one extra call under CUPTI (CUDA arms)
#pragma once
#include <string>
#include <vector>

#include "kq/arm.hpp"
#include "qualify/qualify_arm.hpp"
#include "spec/spec.hpp"

namespace kq {

struct TimedArm {
  IKernelArm* arm = nullptr;
  ArmIdentity identity;
};

void time_arms(const std::vector<TimedArm>& arms, const Spec& spec, const Emit& emit);

}  // namespace kq
