// The decision's result: which arm to adopt for which sizes against which baseline, with the
// speed-ups and intervals that justify it, and why every other arm was passed over. decide()
// (decision/decide.hpp) computes it; decision_sentence() (decision/sentence.hpp) writes its
// English from it. Its JSON form is summary.json's "decision" object; the baseline and eager
// choices are summary.json's "baseline_choice" and "eager_choice".
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kq {

// The reference arm's median over the arm's, with its 95% bootstrap interval: above 1, the
// arm is faster.
struct Speedup {
  double ratio = 0, lo = 0, hi = 0;
  bool operator==(const Speedup&) const = default;
};

// The lowest and highest speed-up over a set of sizes.
struct SpeedupSpan {
  double min = 0, max = 0;
  bool operator==(const SpeedupSpan&) const = default;
};

// One timed size: the arm that wins it (the baseline when none does).
struct SizeDecision {
  std::int64_t size = 0;
  std::string winner;
  std::optional<Speedup> speedup;        // the winner's against the baseline (absent: none won)
  std::optional<Speedup> eager_speedup;  // the winner's against the eager arm, where timed
  bool operator==(const SizeDecision&) const = default;
};

// A size at which a winner's host enqueue outlasts its GPU time.
struct HostBound {
  std::int64_t size = 0;
  double host_s = 0, gpu_s = 0;
  bool operator==(const HostBound&) const = default;
};

// Consecutive timed sizes won by one arm.
struct WinRange {
  std::string arm;
  std::int64_t from = 0, to = 0;
  SpeedupSpan speedup;                       // against the baseline
  std::optional<SpeedupSpan> eager_speedup;  // against the eager arm, where timed
  std::vector<HostBound> host_bound;
  bool operator==(const WinRange&) const = default;
};

// With no win: the candidate whose speed-ups against the baseline have the highest geometric
// mean over the sizes.
struct BestCandidate {
  std::string arm;
  SpeedupSpan speedup;
  std::optional<SpeedupSpan> eager_speedup;
  bool operator==(const BestCandidate&) const = default;
};

struct ArmDevice {
  std::string arm, device;
  bool operator==(const ArmDevice&) const = default;
};

struct ArmWhy {
  std::string arm, why;
  bool operator==(const ArmWhy&) const = default;
};

// The baseline (or eager arm) used: the first of the spec's list that qualified and was timed,
// and why each one before it was passed over.
struct ArmChoice {
  std::vector<std::string> list;
  std::string used;  // "" for none
  std::vector<ArmWhy> passed_over;
  bool operator==(const ArmChoice&) const = default;
};

struct Decision {
  std::string baseline;  // the one used, or the spec's first when none was timed
  double min_speedup = 1.03;
  bool baseline_ran = false;
  std::vector<SizeDecision> per_size;
  std::vector<WinRange> ranges;
  std::vector<ArmDevice> other_device;  // timed arms on another device than the baseline
  std::vector<ArmWhy> not_adopted;      // rejected while timed, or flagged
  std::optional<std::string> eager;     // the eager arm, where the spec names one
  std::optional<bool> eager_ran;
  std::optional<BestCandidate> best_candidate;
  std::string sentence;  // decision_sentence()

  ArmChoice baseline_choice;
  std::optional<ArmChoice> eager_choice;  // where the spec names eager arms
  bool operator==(const Decision&) const = default;
};

#define KQ_DECISION_TYPES(X) \
  X(SizeDecision) X(HostBound) X(WinRange) X(BestCandidate) X(ArmDevice) X(ArmWhy) X(ArmChoice)

#define KQ_DECISION_JSON(T)                    \
  void to_json(nlohmann::json& j, const T& r); \
  void from_json(const nlohmann::json& j, T& r);
KQ_DECISION_TYPES(KQ_DECISION_JSON)
// Decision's JSON is summary.json's "decision": without the choices, which the summary writes
// beside it.
KQ_DECISION_JSON(Decision)
#undef KQ_DECISION_JSON

// A speed-up is written flat, under three keys of the object holding it ("speedup", "lo", "hi"
// in a decision's size; "speedup", "speedup_lo", "speedup_hi" in a timing cell), and a span
// under two ("min_speedup", "max_speedup"): the keys summary.json has always had.
struct SpeedupKeys {
  const char *ratio, *lo, *hi;
};
struct SpanKeys {
  const char *min, *max;
};
void put(nlohmann::json& j, SpeedupKeys k, const std::optional<Speedup>& v);
void get(const nlohmann::json& j, SpeedupKeys k, std::optional<Speedup>& v);
void put(nlohmann::json& j, SpanKeys k, const SpeedupSpan& v);
void get(const nlohmann::json& j, SpanKeys k, SpeedupSpan& v);
void put(nlohmann::json& j, SpanKeys k, const std::optional<SpeedupSpan>& v);
void get(const nlohmann::json& j, SpanKeys k, std::optional<SpeedupSpan>& v);

}  // namespace kq
