// Physical plausibility of what an arm was timed at, at one size: evidence, measured in the same
// run, that a time cannot be the work the arm was qualified to do. A flagged arm is never
// adopted; the report and the decision say why.
//
//   faster_than_bytes   the median (single launches, or graph replays) moves the call's bytes
//                       faster than kLightMargin times the device copy timed in the same run,
//                       where those bytes exceed the L2 (a good float4 kernel reaches about 105%
//                       of the copy; a warm cache legitimately beats it only below the L2)
//   faster_than_flops   the median runs the call's FLOPs faster than kLightMargin times the
//                       vendor GEMM (the compute light) timed in the same run: no cache holds
//                       arithmetic, so at any size
//   launches_no_work    a CUDA call on a non-empty problem launched no kernel, copy or set
//   graph_fewer_kernels the captured graph holds fewer kernel nodes per call than one call
//                       launches: its replay does not time the call's work
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>
#include "record/records.hpp"

namespace kq {

inline constexpr double kLightMargin = 1.25;

struct TimedFacts {
  std::string device;  // "cuda", "cpu", or "" when unknown
  std::int64_t size = 0;
  std::string where;          // "4096 elements", or a format-2 point "M=32768,N=4096"
  double bytes = 0;           // moved by one call: the inputs read and the output written
  double median_s = 0;        // single launches
  double graph_median_s = 0;  // graph replay, per call; 0 when not timed
  double light_gbps = 0;      // the device copy in the same run; 0 when not measured
  double flops = 0;           // one call's FLOPs; 0 when not counted
  double compute_tflops = 0;  // the vendor GEMM in the same run; 0 when not measured
  double l2_bytes = 0;        // 0 when unknown
  const nlohmann::json* profile = nullptr;  // CUPTI's record of one call, when taken
  const rec::GraphInfo* graph = nullptr;    // the captured graph, when captured
};

struct Flag {
  std::string kind;     // faster_than_bytes, launches_no_work, graph_fewer_kernels
  std::string title;    // a few words, for the decision: "faster than its bytes can move"
  std::string message;  // one line, the title and the figures
};

std::vector<Flag> plausibility_flags(const TimedFacts& facts);

}  // namespace kq
