#include "decision/plausibility.hpp"

#include <cstdio>

namespace kq {
namespace {

constexpr const char* kTooFast = "faster than its bytes can move";

std::string fmt(const char* f, double x) {
  char b[48];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// A median that moves the call's bytes faster than the memory can, or "".
std::string too_fast(const TimedFacts& f, double median_s, const char* what) {
  if (median_s <= 0 || f.light_gbps <= 0 || f.l2_bytes <= 0 || f.bytes <= f.l2_bytes) return "";
  const double gbps = f.bytes / median_s / 1e9;
  if (gbps <= kLightMargin * f.light_gbps) return "";
  return std::string(kTooFast) + ": " + what + " moves " + fmt("%.4g", f.bytes / 1e6) +
         " MB per call at " + fmt("%.0f", gbps) + " GB/s, " +
         fmt("%.0f", 100 * gbps / f.light_gbps) + "% of the device copy's " +
         fmt("%.0f", f.light_gbps) + " GB/s in this run (more than " +
         fmt("%.0f", 100 * kLightMargin) + "% is flagged where the bytes exceed the L2)";
}

constexpr const char* kTooFastFlops = "faster than its FLOPs can run";

// A median that runs the call's FLOPs faster than the vendor GEMM can, or "".
std::string too_fast_flops(const TimedFacts& f, double median_s, const char* what) {
  if (median_s <= 0 || f.compute_tflops <= 0 || f.flops <= 0) return "";
  const double tflops = f.flops / median_s / 1e12;
  if (tflops <= kLightMargin * f.compute_tflops) return "";
  return std::string(kTooFastFlops) + ": " + what + " runs " + fmt("%.4g", f.flops / 1e9) +
         " GFLOP per call at " + fmt("%.0f", tflops) + " TFLOP/s, " +
         fmt("%.0f", 100 * tflops / f.compute_tflops) + "% of the vendor GEMM's " +
         fmt("%.0f", f.compute_tflops) + " TFLOP/s in this run (more than " +
         fmt("%.0f", 100 * kLightMargin) + "% is flagged)";
}

}  // namespace

std::vector<Flag> plausibility_flags(const TimedFacts& f) {
  std::vector<Flag> flags;
  if (f.device != "cuda") return flags;
  if (auto m = too_fast(f, f.median_s, "its median single launch"); !m.empty())
    flags.push_back({"faster_than_bytes", kTooFast, m});
  if (auto m = too_fast(f, f.graph_median_s, "its graph replay"); !m.empty())
    flags.push_back({"faster_than_bytes", kTooFast, m});
  if (auto m = too_fast_flops(f, f.median_s, "its median single launch"); !m.empty())
    flags.push_back({"faster_than_flops", kTooFastFlops, m});
  if (auto m = too_fast_flops(f, f.graph_median_s, "its graph replay"); !m.empty())
    flags.push_back({"faster_than_flops", kTooFastFlops, m});
  const bool profiled = f.profile != nullptr && !f.profile->contains("unavailable");
  const int kernels = profiled ? f.profile->value("kernels", 0) : 0;
  if (profiled && f.size > 0 &&
      kernels + f.profile->value("memcpys", 0) + f.profile->value("memsets", 0) == 0)
    flags.push_back(
        {"launches_no_work", "launches no work",
         "launches no work: CUPTI saw no kernel, copy or set in one call at " + f.where});
  if (profiled && f.graph != nullptr && f.graph->launches > 0) {
    const int launches = f.graph->launches;
    const double per_call = static_cast<double>(f.graph->kernel_nodes) / launches;
    if (per_call < kernels)
      flags.push_back({"graph_fewer_kernels", "its CUDA graph holds fewer kernels than a call",
                       "its CUDA graph holds " + fmt("%.3g", per_call) +
                           " kernel node(s) per call, but one call launches " +
                           std::to_string(kernels) +
                           " kernel(s): the graph replay does not time the call's work"});
  }
  return flags;
}

}  // namespace kq
