#include "decision/sentence.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace kq {
namespace {

std::string fmt(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", x);
  return b;
}

// "1.70x", or "1.65x to 1.72x": speed-ups over sizes as the sentence writes them.
std::string ratio_span(const SpeedupSpan& s) {
  return fmt(s.min) == fmt(s.max) ? fmt(s.min) + "x" : fmt(s.min) + "x to " + fmt(s.max) + "x";
}

// "1.2 us" or "1.2-3.4 us".
std::string span_us(const std::vector<double>& v) {
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  return fmt(*mn) == fmt(*mx) ? fmt(*mn) + " us" : fmt(*mn) + "-" + fmt(*mx) + " us";
}

// "a, b and c"
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t k = 0; k < items.size(); ++k)
    out += (k == 0 ? "" : k + 1 == items.size() ? " and " : ", ") + items[k];
  return out;
}

// "Keep B: no arm beats it ...", and the best candidate's speed-ups against eager and B.
std::string keep_sentence(const Decision& d) {
  std::string s = "Keep " + d.baseline + ": no arm beats it by " + fmt(d.min_speedup) +
                  "x or more beyond noise at any timed size.";
  if (!d.best_candidate) return s;
  const BestCandidate& c = *d.best_candidate;
  const std::string eager = d.eager.value_or("");
  const std::string against_base = ratio_span(c.speedup) + " against " + d.baseline;
  s += " The best candidate, " + c.arm + ", is ";
  if (!c.eager_speedup)
    return s + against_base + " (" + eager + ", the eager arm, was not timed at its sizes).";
  // "1.70x over eager but 0.99x against torch_compile"; "0.25x against eager and ..."
  const bool beats_eager = c.eager_speedup->max > 1.0;
  return s + ratio_span(*c.eager_speedup) + (beats_eager ? " over eager (" : " against eager (") +
         eager + ")" + (beats_eager ? " but " : " and ") + against_base + ".";
}

// "4096 and 65536 elements", or for format 2 the points: "M=4096,N=4096 and M=32768,N=4096".
std::string places(const std::vector<std::int64_t>& sizes, const SentenceFacts& facts) {
  std::vector<std::string> at;
  for (std::int64_t n : sizes) {
    auto p = facts.points.find(n);
    at.push_back(p != facts.points.end() ? p->second : std::to_string(n));
  }
  return listed(at) + (facts.points.empty() ? " elements" : "");
}

// " At 4096 and 65536 elements its host enqueue (...) outlasts its GPU time (...): ...", or "".
std::string host_bound_text(const WinRange& r, const SentenceFacts& facts) {
  if (r.host_bound.empty()) return "";
  std::vector<double> host, gpu;
  std::vector<std::int64_t> at;
  for (const HostBound& h : r.host_bound) {
    host.push_back(h.host_s * 1e6);
    gpu.push_back(h.gpu_s * 1e6);
    at.push_back(h.size);
  }
  return " At " + places(at, facts) + " its host enqueue (" + span_us(host) +
         ") outlasts its GPU time (" + span_us(gpu) +
         "): launched one call at a time, it is paced by the host there.";
}

// One range's "Adopt ARM for A to B elements: ...", against eager first, then the baseline.
// Format 2 names every point of the range: its numbers are the spec's order, not a scale.
std::string adopt_range(const Decision& d, const WinRange& r, const SentenceFacts& facts) {
  const std::string eager = d.eager.value_or("");
  std::vector<std::int64_t> in_range;
  for (const SizeDecision& p : d.per_size)
    if (p.size >= r.from && p.size <= r.to) in_range.push_back(p.size);
  const std::string span = !facts.points.empty() ? "at " + places(in_range, facts)
                           : r.from == r.to      ? "at " + std::to_string(r.from) + " elements"
                                                 : "for " + std::to_string(r.from) + " to " +
                                                  std::to_string(r.to) + " elements";
  const std::string over_eager =
      r.eager_speedup ? ratio_span(*r.eager_speedup) + " over eager (" + eager + ") and " : "";
  std::string s = "Adopt " + r.arm + " " + span + ": " + over_eager + ratio_span(r.speedup) +
                  " faster than " + d.baseline + " (95% bootstrap interval above 1).";
  if (d.eager_ran.value_or(false) && r.arm != eager && over_eager.empty())
    s += " " + eager + ", the eager arm, was not timed at these sizes.";
  return s + host_bound_text(r, facts);
}

std::string adopt_sentence(const Decision& d, const SentenceFacts& facts) {
  std::string s;
  for (const WinRange& r : d.ranges) s += (s.empty() ? "" : " ") + adopt_range(d, r, facts);
  const auto won = std::count_if(d.per_size.begin(), d.per_size.end(),
                                 [](const SizeDecision& p) { return p.speedup.has_value(); });
  if (won < static_cast<std::ptrdiff_t>(d.per_size.size()))
    s += " At the other sizes keep " + d.baseline + ".";
  return s;
}

const ArmWhy* find(const std::vector<ArmWhy>& list, const std::string& arm) {
  auto it = std::find_if(list.begin(), list.end(), [&](const ArmWhy& a) { return a.arm == arm; });
  return it == list.end() ? nullptr : &*it;
}

// What the timing says against the baseline: no decision, keep it, or adopt arms for sizes.
std::string core_sentence(const Decision& d, const SentenceFacts& facts) {
  if (const ArmWhy* nb = find(d.not_adopted, d.baseline))
    return "No decision: the baseline arm " + d.baseline + " cannot be trusted (" + nb->why + ").";
  if (!d.baseline_ran)
    return "No decision: the baseline arm " + d.baseline + " was not timed in this run.";
  return d.ranges.empty() ? keep_sentence(d) : adopt_sentence(d, facts);
}

// The arms that are no candidates, and why: another device, or never adopted.
std::string passed_over_arms(const Decision& d, const SentenceFacts& facts) {
  std::string s;
  if (d.baseline_ran && !d.other_device.empty()) {
    std::string others;
    for (const ArmDevice& a : d.other_device)
      others += (others.empty() ? "" : ", ") + a.arm + " on " + a.device;
    s += " Not candidates against a " + facts.baseline_device + " baseline: " + others +
         " (each arm is timed on data in its own device's memory).";
  }
  std::string refused;
  for (const ArmWhy& a : d.not_adopted)
    refused += (refused.empty() ? "" : "; ") + a.arm + " (" + a.why + ")";
  if (!refused.empty()) s += " Never adopted: " + refused + ".";
  if (const ArmWhy* ne = d.eager ? find(d.not_adopted, *d.eager) : nullptr)
    s += " No speed-up against eager: the eager arm " + *d.eager + " cannot be trusted (" +
         ne->why + ").";
  return s;
}

// "nvrtc_jit not among this run's arms; torch_compile not qualified (skipped)": the arms a
// choice passed over, and why.
std::string passed_over_text(const ArmChoice& choice) {
  std::string over;
  for (const ArmWhy& p : choice.passed_over)
    over += (over.empty() ? "" : "; ") + p.arm + " " + p.why;
  return over;
}

// The sentence with what it must say about the choice of baseline: nothing when the first was
// used; which was used and why the ones before it were not; or, none timed, why none was.
std::string with_baseline_choice(const std::string& sentence, const Decision& d) {
  const ArmChoice& choice = d.baseline_choice;
  if (choice.passed_over.empty()) return sentence;
  const std::string over = passed_over_text(choice);
  if (!choice.used.empty())
    return sentence + " The baseline is " + d.baseline +
           ", the first of the spec's that was timed (" + over + ").";
  if (choice.list.size() < 2) return sentence;
  const std::string one =
      "No decision: the baseline arm " + d.baseline + " was not timed in this run.";
  const std::string none = "No decision: none of the spec's baselines was timed (" + over + ").";
  return sentence.rfind(one, 0) == 0 ? none + sentence.substr(one.size()) : sentence + " " + none;
}

// What the sentence must add about the eager arm: nothing when the spec names none or its first
// was used; which was used and why the ones before it were not; or that there is no speed-up
// against eager, and why.
std::string eager_choice_text(const std::optional<ArmChoice>& choice) {
  if (!choice || choice->passed_over.empty()) return "";
  const std::string over = passed_over_text(*choice);
  if (!choice->used.empty())
    return " The eager arm is " + choice->used + ", the first of the spec's that was timed (" +
           over + ").";
  if (choice->list.size() < 2) return " No speed-up against eager: " + over + ".";
  return " No speed-up against eager: none of the spec's eager arms was timed (" + over + ").";
}

}  // namespace

std::string decision_sentence(const Decision& d, const SentenceFacts& facts) {
  std::string s = core_sentence(d, facts) + passed_over_arms(d, facts);
  s = with_baseline_choice(s, d) + eager_choice_text(d.eager_choice);
  if (facts.timing_stopped)
    s += " The timing stage stopped early (" + *facts.timing_stopped +
         "): the sizes it had not finished are missing.";
  return s;
}

}  // namespace kq
