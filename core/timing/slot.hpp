// One arm set up for one timed size: its stream (one for all CUDA arms and the light copy of a
// size), its buffer sets (several when the L2 policy rotates), its timer and, for CUDA arms in
// graph mode, the captured replay; what it measured; and what the checks found.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "device/graph_replay.hpp"
#include "device/stream.hpp"
#include "plan/case.hpp"
#include "plan/timed_points.hpp"
#include "qualify/case_tensors.hpp"
#include "timing/output_checks.hpp"
#include "timing/time_arms.hpp"
#include "timing/timer.hpp"

namespace kq {

struct Slot {
  const TimedArm* arm = nullptr;
  std::shared_ptr<Stream> stream;
  std::vector<std::unique_ptr<CaseTensors>> sets;
  std::size_t next_set = 0;
  std::unique_ptr<SampleTimer> timer;
  std::unique_ptr<GraphReplay> graph;  // captured on sets[0]
  std::vector<double> single, graphed;
  CheckSchedule single_checks, graph_checks;
  double warmup_call_s = 0;  // the warm-up's seconds a call (the enqueue and the wait)
  int poison = 0;            // the pattern the outputs were last poisoned with
  int checked = 0;           // samples whose output was compared
  std::string rejected;      // why a check rejected the arm; empty while it stands

  bool cuda() const { return arm->identity.device == Device::cuda; }
  const std::string& name() const { return arm->identity.name; }
  // The next set of the rotation, for a single sample.
  CaseTensors& take_set() { return *sets[next_set++ % sets.size()]; }
  CaseTensors& graph_set() { return *sets[0]; }

  // One call on `t`, enqueued on the slot's stream; throws when run() does not return ok.
  void call(CaseTensors& t);
  // Poisons t's output again (the other pattern), enqueued on the stream: outside any timed
  // region, before the flush that precedes the set's next sample.
  void repoison(CaseTensors& t);
};

// Sets up `a` for timed point `p`: buffers, prepare() on each set, warm-up by time (the hold tested
// once), the graph capture (skipped with a record when the arm cannot be captured), and every
// set poisoned. Throws when the arm cannot be set up.
Slot make_slot(const TimedArm& a, const Spec& spec, const TimedPoint& p, bool graph_mode,
               const std::shared_ptr<Stream>& cuda_stream, std::uint64_t check_seed,
               const Emit& emit);

}  // namespace kq
