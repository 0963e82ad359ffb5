// The decision in one paragraph of English, written from the typed result alone (decide() and
// the run's baseline and eager choices), so that every report states the same decision.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "decision/decision.hpp"

namespace kq {

// What the sentence says that the decision does not hold.
struct SentenceFacts {
  std::string baseline_device;                // "cuda", "cpu" or "" when unknown
  std::optional<std::string> timing_stopped;  // why the timing stage stopped early
  // Format 2: each timing point's name by its number (the decision's sizes), "M=32768,N=4096".
  std::map<std::int64_t, std::string> points;
};

std::string decision_sentence(const Decision& d, const SentenceFacts& facts);

}  // namespace kq
