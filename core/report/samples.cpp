#include "report/samples.hpp"

#include "stats/stats.hpp"

namespace kq {

double usual_sm_clock(const std::vector<nlohmann::json>& records) {
  std::vector<double> clocks;
  for (const auto& r : records)
    if (r.is_object() && r.contains("sm_clock_mhz"))
      clocks.push_back(r["sm_clock_mhz"].get<double>());
  return clocks.empty() ? 0.0 : summarize(clocks).median;
}

std::string left_out_because(const nlohmann::json& r, double usual_clock_mhz) {
  if (usual_clock_mhz > 0 && r.contains("sm_clock_mhz") &&
      r["sm_clock_mhz"].get<double>() < 0.75 * usual_clock_mhz)
    return "throttled";
  if (!r.value("held", true)) return "unheld";
  return "";
}

RunSamples select_samples(const std::vector<nlohmann::json>& records) {
  RunSamples out;
  out.usual_clock_mhz = usual_sm_clock(records);
  for (const auto& r : records) {
    if (!r.is_object() || r.value("type", "") != "round") continue;
    KeptSamples& k = out.by_key[{r.value("arm", ""), r.value("size", std::int64_t{0}),
                                 r.value("mode", "single")}];
    if (const std::string why = left_out_because(r, out.usual_clock_mhz); !why.empty()) {
      k.left_out[why]++;
      continue;
    }
    k.seconds.push_back(r.value("seconds", 0.0));
    if (r.contains("host_seconds")) k.host_seconds.push_back(r["host_seconds"].get<double>());
  }
  return out;
}

}  // namespace kq
