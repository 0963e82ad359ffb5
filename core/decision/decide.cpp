#include "decision/decide.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "stats/stats.hpp"

namespace kq {
namespace {

std::string fmt(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", x);
  return b;
}

// "1.70x", or "1.65x to 1.72x": speed-ups over sizes as the sentence writes them.
std::string ratio_span(double lo, double hi) {
  return fmt(lo) == fmt(hi) ? fmt(lo) + "x" : fmt(lo) + "x to " + fmt(hi) + "x";
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
  // The eager arm's samples at a size, where it was timed and can be trusted (else nullptr).
  const std::string& eager = context.eager;
  auto eager_samples = [&](std::int64_t size) -> const std::vector<double>* {
    if (eager.empty() || context.not_adopted.count(eager)) return nullptr;
    auto at = samples.find(size);
    if (at == samples.end()) return nullptr;
    auto e = at->second.find(eager);
    return e == at->second.end() || e->second.empty() ? nullptr : &e->second;
  };
  // An arm's speed-up against the eager arm at a size: its median over the arm's, with the
  // same bootstrap (and seed) as against the baseline.
  auto against_eager = [&](std::int64_t size,
                           const std::string& arm) -> std::optional<SpeedupEstimate> {
    const std::vector<double>* e = eager_samples(size);
    if (!e || arm == eager || !context.comparable(arm, eager)) return std::nullopt;
    auto s = samples.at(size).find(arm);
    if (s == samples.at(size).end() || s->second.empty()) return std::nullopt;
    return bootstrap_speedup(*e, s->second, 2000, static_cast<std::uint64_t>(size));
  };
  bool eager_ran = false;
  for (const auto& [size, arms] : samples) eager_ran |= eager_samples(size) != nullptr;
  // Each candidate's speed-up against the baseline at every size, for the best candidate.
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> candidate_ratios;
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
      if (name != eager) candidate_ratios[name].push_back({size, e.ratio});
      bool wins_here = e.lo > 1.0 && e.ratio >= min_speedup;
      if (wins_here && (best.arm.empty() || e.ratio > best.e.ratio)) best = {size, name, e};
    }
    json row = {{"size", size}, {"winner", best.arm.empty() ? baseline : best.arm}};
    if (!best.arm.empty()) {
      row["speedup"] = best.e.ratio;
      row["lo"] = best.e.lo;
      row["hi"] = best.e.hi;
      if (auto ee = against_eager(size, best.arm)) {
        row["eager_speedup"] = ee->ratio;
        row["eager_lo"] = ee->lo;
        row["eager_hi"] = ee->hi;
      }
      wins.push_back(best);
    }
    per_size.push_back(row);
  }
  d["baseline_ran"] = baseline_ran;
  d["per_size"] = per_size;
  if (!eager.empty()) {
    d["eager"] = eager;
    d["eager_ran"] = eager_ran;
  }
  // The lowest and highest speed-up against eager of `arm` over the sizes `at`, into
  // j["min_eager_speedup"] and j["max_eager_speedup"]; nothing where eager was timed at none.
  auto eager_span = [&](const std::string& arm, const std::vector<std::int64_t>& at, json& j) {
    std::vector<double> r;
    for (std::int64_t size : at)
      if (auto ee = against_eager(size, arm)) r.push_back(ee->ratio);
    if (r.empty()) return;
    j["min_eager_speedup"] = *std::min_element(r.begin(), r.end());
    j["max_eager_speedup"] = *std::max_element(r.begin(), r.end());
  };

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
    std::vector<std::int64_t> range_sizes;
    for (std::size_t k = i; k <= j; ++k) {
      range_sizes.push_back(wins[k].size);
      lo = std::min(lo, wins[k].e.ratio);
      hi = std::max(hi, wins[k].e.ratio);
      const double gpu = summarize(samples.at(wins[k].size).at(wins[k].arm)).median;
      if (auto hs = context.host_median_s.find(wins[k].size); hs != context.host_median_s.end())
        if (auto h = hs->second.find(wins[k].arm); h != hs->second.end() && h->second > gpu)
          host_bound.push_back({{"size", wins[k].size}, {"host_s", h->second}, {"gpu_s", gpu}});
    }
    json range = {{"arm", wins[i].arm}, {"from", wins[i].size}, {"to", wins[j].size},
                  {"min_speedup", lo},  {"max_speedup", hi},    {"host_bound", host_bound}};
    eager_span(wins[i].arm, range_sizes, range);
    ranges.push_back(range);
    i = j + 1;
  }
  d["ranges"] = ranges;
  // With no win: the candidate that came closest (the highest geometric mean of its speed-ups
  // against the baseline), whose speed-up against eager the sentence states beside them.
  json best_candidate;
  if (eager_ran && ranges.empty()) {
    double best_mean = 0;
    for (const auto& [arm, rs] : candidate_ratios) {
      double logs = 0;
      for (const auto& [size, r] : rs) logs += std::log(r);
      const double mean = std::exp(logs / static_cast<double>(rs.size()));
      if (best_candidate.is_null() || mean > best_mean) {
        best_mean = mean;
        std::vector<std::int64_t> at;
        double lo = rs.front().second, hi = lo;
        for (const auto& [size, r] : rs) {
          at.push_back(size);
          lo = std::min(lo, r);
          hi = std::max(hi, r);
        }
        best_candidate = {{"arm", arm}, {"min_speedup", lo}, {"max_speedup", hi}};
        eager_span(arm, at, best_candidate);
      }
    }
    if (!best_candidate.is_null()) d["best_candidate"] = best_candidate;
  }

  std::string sentence;
  if (auto nb = context.not_adopted.find(baseline); nb != context.not_adopted.end()) {
    sentence =
        "No decision: the baseline arm " + baseline + " cannot be trusted (" + nb->second + ").";
  } else if (!baseline_ran) {
    sentence = "No decision: the baseline arm " + baseline + " was not timed in this run.";
  } else if (ranges.empty()) {
    sentence = "Keep " + baseline + ": no arm beats it by " + fmt(min_speedup) +
               "x or more beyond noise at any timed size.";
    if (!best_candidate.is_null()) {
      const std::string against_base =
          ratio_span(best_candidate["min_speedup"], best_candidate["max_speedup"]) + " against " +
          baseline;
      sentence += " The best candidate, " + best_candidate["arm"].get<std::string>() + ", is ";
      if (best_candidate.contains("min_eager_speedup")) {
        // "1.70x over eager but 0.99x against torch_compile"; "0.25x against eager and ..."
        const bool beats_eager = best_candidate["max_eager_speedup"].get<double>() > 1.0;
        sentence +=
            ratio_span(best_candidate["min_eager_speedup"], best_candidate["max_eager_speedup"]) +
            (beats_eager ? " over eager (" : " against eager (") + eager + ")" +
            (beats_eager ? " but " : " and ") + against_base + ".";
      } else {
        sentence += against_base + " (" + eager + ", the eager arm, was not timed at its sizes).";
      }
    }
  } else {
    for (const auto& r : ranges) {
      if (!sentence.empty()) sentence += " ";
      std::string span = r["from"] == r["to"]
                             ? "at " + std::to_string(r["from"].get<std::int64_t>()) + " elements"
                             : "for " + std::to_string(r["from"].get<std::int64_t>()) + " to " +
                                   std::to_string(r["to"].get<std::int64_t>()) + " elements";
      const std::string sp = ratio_span(r["min_speedup"], r["max_speedup"]);
      const std::string arm = r["arm"];
      // Against eager first, then against the baseline: both in the one sentence.
      std::string over_eager;
      if (r.contains("min_eager_speedup"))
        over_eager = ratio_span(r["min_eager_speedup"], r["max_eager_speedup"]) + " over eager (" +
                     eager + ") and ";
      sentence += "Adopt " + arm + " " + span + ": " + over_eager + sp + " faster than " +
                  baseline + " (95% bootstrap interval above 1).";
      if (eager_ran && arm != eager && over_eager.empty())
        sentence += " " + eager + ", the eager arm, was not timed at these sizes.";
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
  if (auto ne = context.not_adopted.find(eager); !eager.empty() && ne != context.not_adopted.end())
    sentence += " No speed-up against eager: the eager arm " + eager + " cannot be trusted (" +
                ne->second + ").";
  d["sentence"] = sentence;
  return d;
}

}  // namespace kq
