// What the timing loop checks of the outputs it produces. Every sample runs on an output that
// was poisoned after the set's previous sample; a random subset of samples (one at an
// unpredictable position in every block of eight of an arm and mode, from a seed drawn per
// run) and every sample of a size's closing round are compared against the reference. An arm
// that does less while timed than while qualified (a result reused on unchanged buffers, a
// shortcut at the timed sizes, a graph that holds nothing) leaves poison behind and is caught.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "device/reference_copy.hpp"
#include "qualify/case_tensors.hpp"
#include "qualify/compare.hpp"
#include "spec/spec.hpp"

namespace kq {

class CheckSchedule {
 public:
  explicit CheckSchedule(std::uint64_t seed = 0);
  // Whether the next sample is checked: exactly one in each block of eight, at a random place.
  bool next();

 private:
  std::mt19937_64 rng_;
  int position_ = 0;  // in the current block
  int pick_ = 0;      // the block's checked position
};

struct OutputFinding {
  bool ok = true;
  std::string message;  // one line, when not ok
  std::int64_t index = -1;
  std::string expected, got;
};

// The finding for a mismatch of one of t's outputs.
OutputFinding mismatch_finding(const CaseTensors& t, const CaseTensors::Mismatch& m);

// The outputs of `t` (each downloaded into `scratch`, whose memory is reused) against want[o]
// (output o's reference, dense): guard zones, then every element by rules[o] (bounds[o]: the
// reference's bounds where output o is compared by the accumulation bound). With
// `on_device` (the one output's reference made comparable on t's CUDA device: want[0] and
// bounds[0] where compared by the bound, whole or streamed; t's output device_checkable, its
// reference not sampled), the output is checked where it lies instead (qualify/case_checks.hpp),
// on `stream`: the same findings. `unknown[o]` (positions in want[o],
// where given) are elements whose reference is not known (fresh inputs changed them and they were
// not evaluated again): whatever the output holds there is accepted. Host checks only.
OutputFinding check_timed_output(const CaseTensors& t, const std::vector<OutputRule>& rules,
                                 const std::vector<HostBytes>& want,
                                 const std::vector<std::vector<double>>& bounds, HostBytes& scratch,
                                 const ReferenceCopy* on_device = nullptr, void* stream = nullptr,
                                 const std::vector<std::vector<std::size_t>>& unknown = {});

}  // namespace kq
