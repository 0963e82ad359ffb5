// The first calls of a timing worker's arms, made before it knows which of them qualified
// (timing/early_worker.hpp): every arm prepared and called once at every timed point, on one set
// of tensors per point and device, so that what a first call builds (a torch.compile build, a
// plan search, a JIT) is done while qualification still runs. Nothing here is timed or
// recorded: the timing stage sets every arm up again, and that set-up then finds it built.
//
// An arm that cannot be set up at a point is not tried again. A CPU arm is called where
// time_arms would time it: beside CUDA arms, not with --quick, and only while its last call
// says the next fits the CPU call budget. Where there are CUDA arms from files and from plugins,
// the two kinds are warmed side by side (the files' in this thread, one interpreter; the
// plugins' in another); a change to the device found after that is looked for again call by
// call, one arm after another.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "spec/spec.hpp"
#include "timing/time_arms.hpp"

namespace kq {

struct WarmResult {
  int calls = 0;
  // Arms whose call changed the device's settings or their stream's attributes (put back since):
  // arm -> what changed (device/device_state.hpp). The timing stage rejects them by device_state.
  std::map<std::string, std::string> changed_device;
};

// `alive` is called before every arm's call at every point (the worker's sign of life).
WarmResult warm_arms(const std::vector<TimedArm>& arms, const Spec& spec, bool cpu_beside_cuda,
                     const std::function<void()>& alive);

}  // namespace kq
