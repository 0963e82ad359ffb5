// "Did you mean": the known name nearest to a misspelt one. A small local copy of the idea in
// core/spec/suggest.hpp, which this layer may not include.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kq::ix {

// The candidate at the smallest edit distance from `word`, if at most a third of the longer
// (at least 1); ties go to the earlier candidate.
std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace kq::ix
