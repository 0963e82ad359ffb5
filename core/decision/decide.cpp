#include "decision/decide.hpp"

#include <algorithm>
#include <cstdio>

#include "stats/stats.hpp"

namespace kq {
namespace {

std::string fmt(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", x);
  return b;
}

}  // namespace

std::string instance_arm(const std::string& name) { return name.substr(0, name.find('#')); }

std::string ArmContext::device_of(const std::string& arm) const {
  auto it = devices.find(instance_arm(arm));
  return it == devices.end() ? std::string() : it->second;
}

bool ArmContext::comparable(const std::string& arm, const std::string& baseline) const {
  const std::string dev = device_of(arm), base = device_of(baseline);
  return dev.empty() || base.empty() || dev == base;
}

nlohmann::json decide(
    const std::map<std::int64_t, std::map<std::string, std::vector<double>>>& samples,
    const std::string& baseline, double min_speedup, const ArmContext& context) {
  using nlohmann::json;
  json d = {{"baseline", baseline}, {"min_speedup", min_speedup}};
  std::map<std::string, std::string> other_device;  // timed arms outside the baseline's device
  json per_size = json::array();
  bool baseline_ran = false;
  struct Win {
    std::int64_t size;
    std::string arm;
    SpeedupEstimate e;
  };
  std::vector<Win> wins;
  for (const auto& [size, arms] : samples) {
    auto b = arms.find(baseline);
    if (b == arms.end() || b->second.empty() || context.not_adopted.count(baseline)) continue;
    baseline_ran = true;
    Win best{size, "", {}};
    for (const auto& [name, s] : arms) {
      // "arm#2" is a second instance timed for self-agreement (kq run --twice): a control,
      // never a candidate.
      if (name == baseline || s.empty() || name.find('#') != std::string::npos) continue;
      if (context.not_adopted.count(instance_arm(name))) continue;
      if (!context.comparable(name, baseline)) {
        other_device[instance_arm(name)] = context.device_of(name);
        continue;
      }
      SpeedupEstimate e = bootstrap_speedup(b->second, s, 2000, static_cast<std::uint64_t>(size));
      bool wins_here = e.lo > 1.0 && e.ratio >= min_speedup;
      if (wins_here && (best.arm.empty() || e.ratio > best.e.ratio)) best = {size, name, e};
    }
    json row = {{"size", size}, {"winner", best.arm.empty() ? baseline : best.arm}};
    if (!best.arm.empty()) {
      row["speedup"] = best.e.ratio;
      row["lo"] = best.e.lo;
      row["hi"] = best.e.hi;
      wins.push_back(best);
    }
    per_size.push_back(row);
  }
  d["baseline_ran"] = baseline_ran;
  d["per_size"] = per_size;

  // Consecutive sizes won by the same arm form one range.
  json ranges = json::array();
  std::vector<std::int64_t> sizes;
  for (const auto& [size, arms] : samples) sizes.push_back(size);
  for (std::size_t i = 0; i < wins.size();) {
    std::size_t j = i;
    auto next_size = [&](std::int64_t s) {
      auto it = std::upper_bound(sizes.begin(), sizes.end(), s);
      return it == sizes.end() ? std::int64_t{-1} : *it;
    };
    while (j + 1 < wins.size() && wins[j + 1].arm == wins[i].arm &&
           wins[j + 1].size == next_size(wins[j].size))
      ++j;
    double lo = wins[i].e.ratio, hi = wins[i].e.ratio;
    json host_bound = json::array();
    for (std::size_t k = i; k <= j; ++k) {
      lo = std::min(lo, wins[k].e.ratio);
      hi = std::max(hi, wins[k].e.ratio);
      const double gpu = summarize(samples.at(wins[k].size).at(wins[k].arm)).median;
      if (auto hs = context.host_median_s.find(wins[k].size); hs != context.host_median_s.end())
        if (auto h = hs->second.find(wins[k].arm); h != hs->second.end() && h->second > gpu)
          host_bound.push_back({{"size", wins[k].size}, {"host_s", h->second}, {"gpu_s", gpu}});
    }
    ranges.push_back({{"arm", wins[i].arm},
                      {"from", wins[i].size},
                      {"to", wins[j].size},
                      {"min_speedup", lo},
                      {"max_speedup", hi},
                      {"host_bound", host_bound}});
    i = j + 1;
  }
  d["ranges"] = ranges;

  std::string sentence;
  if (auto nb = context.not_adopted.find(baseline); nb != context.not_adopted.end()) {
    sentence =
        "No decision: the baseline arm " + baseline + " cannot be trusted (" + nb->second + ").";
  } else if (!baseline_ran) {
    sentence = "No decision: the baseline arm " + baseline + " was not timed in this run.";
  } else if (ranges.empty()) {
    sentence = "Keep " + baseline + ": no arm beats it by " + fmt(min_speedup) +
               "x or more beyond noise at any timed size.";
  } else {
    for (const auto& r : ranges) {
      if (!sentence.empty()) sentence += " ";
      std::string span = r["from"] == r["to"]
                             ? "at " + std::to_string(r["from"].get<std::int64_t>()) + " elements"
                             : "for " + std::to_string(r["from"].get<std::int64_t>()) + " to " +
                                   std::to_string(r["to"].get<std::int64_t>()) + " elements";
      std::string sp = fmt(r["min_speedup"].get<double>()) == fmt(r["max_speedup"].get<double>())
                           ? fmt(r["min_speedup"].get<double>()) + "x"
                           : fmt(r["min_speedup"].get<double>()) + "x to " +
                                 fmt(r["max_speedup"].get<double>()) + "x";
      sentence += "Adopt " + r["arm"].get<std::string>() + " " + span + ": " + sp +
                  " faster than " + baseline + " (95% bootstrap interval above 1).";
      if (const json& hb = r["host_bound"]; !hb.empty()) {
        std::vector<double> host, gpu;
        std::string at;
        for (std::size_t k = 0; k < hb.size(); ++k) {
          host.push_back(hb[k]["host_s"].get<double>() * 1e6);
          gpu.push_back(hb[k]["gpu_s"].get<double>() * 1e6);
          at += (k == 0               ? ""
                 : k + 1 == hb.size() ? " and "
                                      : ", ") +
                std::to_string(hb[k]["size"].get<std::int64_t>());
        }
        auto span_us = [](const std::vector<double>& v) {
          const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
          return fmt(*mn) == fmt(*mx) ? fmt(*mn) + " us" : fmt(*mn) + "-" + fmt(*mx) + " us";
        };
        sentence += " At " + at + " elements its host enqueue (" + span_us(host) +
                    ") outlasts its GPU time (" + span_us(gpu) +
                    "): launched one call at a time, it is paced by the host there.";
      }
    }
    if (wins.size() < per_size.size()) sentence += " At the other sizes keep " + baseline + ".";
  }
  json other = json::array();
  std::string others;
  for (const auto& [arm, dev] : other_device) {
    other.push_back({{"arm", arm}, {"device", dev}});
    others += (others.empty() ? "" : ", ") + arm + " on " + dev;
  }
  d["other_device"] = other;
  if (baseline_ran && !other_device.empty())
    sentence += " Not candidates against a " + context.device_of(baseline) +
                " baseline: " + others + " (each arm is timed on data in its own device's memory).";
  json refused = json::array();
  std::string refused_text;
  for (const auto& [arm, why] : context.not_adopted) {
    refused.push_back({{"arm", arm}, {"why", why}});
    refused_text += (refused_text.empty() ? "" : "; ") + arm + " (" + why + ")";
  }
  d["not_adopted"] = refused;
  if (!refused_text.empty()) sentence += " Never adopted: " + refused_text + ".";
  d["sentence"] = sentence;
  return d;
}

}  // namespace kq
