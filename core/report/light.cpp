#include "report/light.hpp"

#include "stats/stats.hpp"

namespace kq {

std::map<std::int64_t, Light> light_by_size(const std::vector<nlohmann::json>& rounds) {
  std::map<std::int64_t, std::vector<double>> bw;
  for (const auto& r : rounds) {
    if (!r.is_object() || r.value("type", "") != "light") continue;
    if (!r.value("held", true)) continue;  // its blocking kernel timed out
    const double s = r.value("seconds", 0.0), b = r.value("bytes", 0.0);
    if (s > 0 && b > 0) bw[r.value("size", std::int64_t{0})].push_back(b / s / 1e9);
  }
  std::map<std::int64_t, Light> out;
  for (const auto& [size, v] : bw) {
    SampleStats st = summarize(v);
    out[size] = {st.n, st.median, st.max};
  }
  return out;
}

}  // namespace kq
