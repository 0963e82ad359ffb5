// The timing stage, in the worker that runs it: every qualified arm at every timing size,
// interleaved in a freshly shuffled order each round, each sample a single call preceded by
// the spec's L2 policy. Every sample is emitted as it is taken.
//
// Records (JSON, "type" first):
//   {"type":"size_start","size","arms":[...]}
//   {"type":"arm_skip","arm","size","reason"}           could not be set up or prepared
//   {"type":"profile","arm","size","kernels","kernel_seconds","memcpys","memsets","list"}
//                                                       one extra call under CUPTI (CUDA arms)
//   {"type":"light","size","round","seconds","bytes"}   the device copy (speed of light)
//   {"type":"round","arm","size","mode","round","seconds"}
//   {"type":"size_end","size","rounds","stopped_by","elapsed_s"}
//   {"type":"recheck","arm","size","ok","message"}      outputs of the timing loop checked
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
