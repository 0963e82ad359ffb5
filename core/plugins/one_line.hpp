// Load errors are printed one per line, so every message that may carry foreign text (dlerror,
// an exception's what()) goes through one_line() first.
#pragma once
#include <string>
#include <string_view>

namespace kq {

// `text` with every control character (newline, tab...) turned into a space, runs of spaces
// collapsed, ends trimmed, and cut (with "...") past `max_chars`: a plugin's exception text must
// not be able to flood the report.
std::string one_line(std::string_view text, std::size_t max_chars = 1000);

}  // namespace kq
