#include "decision/decide.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "stats/stats.hpp"

namespace kq {
namespace {

// The same bootstrap, with the same seed per size, for every speed-up the decision states.
Speedup speedup_of(const std::vector<double>& reference, const std::vector<double>& arm,
                   std::int64_t size) {
  const SpeedupEstimate e =
      bootstrap_speedup(reference, arm, 2000, static_cast<std::uint64_t>(size));
  return {e.ratio, e.lo, e.hi};
}

// What every step reads: the samples, the baseline, the rule and the context.
struct Inputs {
  const TimedSamples& samples;
  const std::string& baseline;
  double min_speedup;
  const ArmContext& context;

  // The eager arm's samples at a size, where it was timed and can be trusted (else nullptr).
  const std::vector<double>* eager_samples(std::int64_t size) const {
    const std::string& eager = context.eager;
    if (eager.empty() || context.not_adopted.count(eager)) return nullptr;
    auto at = samples.find(size);
    if (at == samples.end()) return nullptr;
    auto e = at->second.find(eager);
    return e == at->second.end() || e->second.empty() ? nullptr : &e->second;
  }

  // An arm's speed-up against the eager arm at a size.
  std::optional<Speedup> against_eager(std::int64_t size, const std::string& arm) const {
    const std::vector<double>* e = eager_samples(size);
    if (!e || arm == context.eager || !context.comparable(arm, context.eager)) return std::nullopt;
    if (const std::string own = context.in_worker(context.eager, arm); own != context.eager) {
      auto o = samples.at(size).find(own);
      if (o == samples.at(size).end() || o->second.empty()) return std::nullopt;
      e = &o->second;
    }
    auto s = samples.at(size).find(arm);
    if (s == samples.at(size).end() || s->second.empty()) return std::nullopt;
    return speedup_of(*e, s->second, size);
  }

  // The lowest and highest speed-up against eager of `arm` over the sizes `at`; nothing where
  // eager was timed at none of them.
  std::optional<SpeedupSpan> eager_span(const std::string& arm,
                                        const std::vector<std::int64_t>& at) const {
    std::vector<double> r;
    for (std::int64_t size : at)
      if (auto e = against_eager(size, arm)) r.push_back(e->ratio);
    if (r.empty()) return std::nullopt;
    return SpeedupSpan{*std::min_element(r.begin(), r.end()),
                       *std::max_element(r.begin(), r.end())};
  }
};

struct Win {
  std::int64_t size = 0;
  std::string arm;
  Speedup speedup;
};

// What the sizes said: each size's winner, the wins, and every candidate's speed-ups.
struct SizeOutcomes {
  std::vector<SizeDecision> per_size;
  std::vector<Win> wins;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> candidate_ratios;
  std::map<std::string, std::string> other_device;  // timed arms outside the baseline's device
  bool baseline_ran = false;
};

// Whether `name` may win against the baseline; an arm on another device is noted instead.
bool candidate(const Inputs& in, const std::string& name, const std::vector<double>& s,
               SizeOutcomes& out) {
  // "arm#2" is a second instance timed for self-agreement (kq run --twice), "arm@label" a
  // reference timed again in an isolated worker: controls, never candidates.
  if (name == in.baseline || s.empty() || name != instance_arm(name)) return false;
  if (in.context.not_adopted.count(instance_arm(name))) return false;
  if (!in.context.comparable(name, in.baseline)) {
    out.other_device[instance_arm(name)] = in.context.device_of(name);
    return false;
  }
  return true;
}

// Every size at which the baseline was timed: the fastest candidate that wins beyond noise.
SizeOutcomes size_outcomes(const Inputs& in) {
  SizeOutcomes out;
  for (const auto& [size, arms] : in.samples) {
    auto b = arms.find(in.baseline);
    if (b == arms.end() || b->second.empty() || in.context.not_adopted.count(in.baseline)) continue;
    out.baseline_ran = true;
    std::optional<Win> best;
    for (const auto& [name, s] : arms) {
      if (!candidate(in, name, s, out)) continue;
      // An isolated arm against the baseline of its own worker, where that was timed.
      const std::vector<double>* base = &b->second;
      if (const std::string own = in.context.in_worker(in.baseline, name); own != in.baseline) {
        auto o = arms.find(own);
        if (o == arms.end() || o->second.empty()) continue;
        base = &o->second;
      }
      const Speedup e = speedup_of(*base, s, size);
      if (name != in.context.eager) out.candidate_ratios[name].push_back({size, e.ratio});
      const bool wins_here = e.lo > 1.0 && e.ratio >= in.min_speedup;
      if (wins_here && (!best || e.ratio > best->speedup.ratio)) best = Win{size, name, e};
    }
    SizeDecision row{size, best ? best->arm : in.baseline, std::nullopt, std::nullopt};
    if (best) {
      row.speedup = best->speedup;
      row.eager_speedup = in.against_eager(size, best->arm);
      out.wins.push_back(*best);
    }
    out.per_size.push_back(row);
  }
  return out;
}

// The sizes of a range at which the winner's host enqueue outlasts its GPU time.
std::vector<HostBound> host_bound(const Inputs& in, const std::vector<Win>& wins) {
  std::vector<HostBound> out;
  for (const Win& w : wins) {
    const double gpu = summarize(in.samples.at(w.size).at(w.arm)).median;
    auto hs = in.context.host_median_s.find(w.size);
    if (hs == in.context.host_median_s.end()) continue;
    if (auto h = hs->second.find(w.arm); h != hs->second.end() && h->second > gpu)
      out.push_back({w.size, h->second, gpu});
  }
  return out;
}

// Consecutive timed sizes won by the same arm form one range.
std::vector<WinRange> win_ranges(const Inputs& in, const std::vector<Win>& wins) {
  std::vector<std::int64_t> sizes;
  for (const auto& [size, arms] : in.samples) sizes.push_back(size);
  auto next_size = [&](std::int64_t s) {
    auto it = std::upper_bound(sizes.begin(), sizes.end(), s);
    return it == sizes.end() ? std::int64_t{-1} : *it;
  };
  std::vector<WinRange> ranges;
  for (std::size_t i = 0; i < wins.size();) {
    std::size_t j = i;
    while (j + 1 < wins.size() && wins[j + 1].arm == wins[i].arm &&
           wins[j + 1].size == next_size(wins[j].size))
      ++j;
    const std::vector<Win> run(wins.begin() + static_cast<std::ptrdiff_t>(i),
                               wins.begin() + static_cast<std::ptrdiff_t>(j + 1));
    WinRange r;
    r.arm = wins[i].arm;
    r.from = wins[i].size;
    r.to = wins[j].size;
    r.speedup = {wins[i].speedup.ratio, wins[i].speedup.ratio};
    std::vector<std::int64_t> at;
    for (const Win& w : run) {
      at.push_back(w.size);
      r.speedup.min = std::min(r.speedup.min, w.speedup.ratio);
      r.speedup.max = std::max(r.speedup.max, w.speedup.ratio);
    }
    r.host_bound = host_bound(in, run);
    r.eager_speedup = in.eager_span(r.arm, at);
    ranges.push_back(r);
    i = j + 1;
  }
  return ranges;
}

// With no win: the candidate that came closest (the highest geometric mean of its speed-ups
// against the baseline), whose speed-up against eager the sentence states beside them.
std::optional<BestCandidate> best_candidate(const Inputs& in, const SizeOutcomes& sizes) {
  std::optional<BestCandidate> best;
  double best_mean = 0;
  for (const auto& [arm, rs] : sizes.candidate_ratios) {
    double logs = 0;
    for (const auto& [size, r] : rs) logs += std::log(r);
    const double mean = std::exp(logs / static_cast<double>(rs.size()));
    if (best && mean <= best_mean) continue;
    best_mean = mean;
    BestCandidate c;
    c.arm = arm;
    c.speedup = {rs.front().second, rs.front().second};
    std::vector<std::int64_t> at;
    for (const auto& [size, r] : rs) {
      at.push_back(size);
      c.speedup.min = std::min(c.speedup.min, r);
      c.speedup.max = std::max(c.speedup.max, r);
    }
    c.eager_speedup = in.eager_span(arm, at);
    best = c;
  }
  return best;
}

}  // namespace

std::string ArmContext::in_worker(const std::string& reference, const std::string& arm) const {
  auto it = worker_of.find(arm);
  return it == worker_of.end() || reference.empty() ? reference
                                                    : reference_in_worker(reference, it->second);
}

std::string ArmContext::device_of(const std::string& arm) const {
  auto it = devices.find(instance_arm(arm));
  return it == devices.end() ? std::string() : it->second;
}

bool ArmContext::comparable(const std::string& arm, const std::string& baseline) const {
  const std::string dev = device_of(arm), base = device_of(baseline);
  return dev.empty() || base.empty() || dev == base;
}

Decision decide(const TimedSamples& samples, const std::string& baseline, double min_speedup,
                const ArmContext& context) {
  const Inputs in{samples, baseline, min_speedup, context};
  const SizeOutcomes sizes = size_outcomes(in);
  Decision d;
  d.baseline = baseline;
  d.min_speedup = min_speedup;
  d.baseline_ran = sizes.baseline_ran;
  d.per_size = sizes.per_size;
  d.ranges = win_ranges(in, sizes.wins);
  if (!context.eager.empty()) {
    d.eager = context.eager;
    d.eager_ran = std::any_of(samples.begin(), samples.end(),
                              [&](const auto& s) { return in.eager_samples(s.first) != nullptr; });
  }
  if (d.eager_ran.value_or(false) && d.ranges.empty()) d.best_candidate = best_candidate(in, sizes);
  for (const auto& [arm, device] : sizes.other_device) d.other_device.push_back({arm, device});
  for (const auto& [arm, why] : context.not_adopted) d.not_adopted.push_back({arm, why});
  return d;
}

ArmChoice choose_arm(const std::vector<std::string>& list,
                     const std::function<std::string(const std::string&)>& why_not) {
  ArmChoice choice;
  choice.list = list;
  for (const auto& arm : list) {
    std::string why = why_not(arm);
    if (why.empty()) {
      choice.used = arm;
      break;
    }
    choice.passed_over.push_back({arm, std::move(why)});
  }
  return choice;
}

}  // namespace kq
