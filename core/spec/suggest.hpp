// "Did you mean" for misspelt keys and values: the closest candidate by edit distance, offered
// only when it is close enough to be a likely typo. Free of YAML so tests can use it directly.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kq {

// Optimal-string-alignment distance (insertions, deletions, substitutions, adjacent swaps),
// ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if the distance is at most a third of the longer of the two
// (at least 1) or `word` is a prefix of it (3 letters or more); ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string_view>& candidates);

// "a, b, c": for messages that list what is valid.
std::string join_names(const std::vector<std::string_view>& names);

}  // namespace kq
