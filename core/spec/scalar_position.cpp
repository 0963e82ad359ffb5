// Where a position inside a scalar's value lies in the file. A literal block keeps its lines as
// they are written, each after the block's indentation, so value line k is the k-th line after
// the `|` indicator; each mapping is confirmed against the file's text before it is trusted.
#include <string_view>

#include "spec/shaped_sections.hpp"

namespace kq::spec_detail {
namespace {

// Line `line` (1-based) of `s`, without its newline.
std::string_view nth_line(std::string_view s, int line) {
  std::size_t start = 0;
  for (int i = 1; i < line; ++i) {
    const std::size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  const std::size_t end = s.find('\n', start);
  return s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

std::optional<YAML::Mark> in_block(const Field& f, const std::string& value, int line, int column) {
  const std::string_view text = f.source().text;
  const YAML::Mark& m = f.mark();
  const std::string_view value_line = nth_line(value, line);
  // The file's line of the indicator is m.line + 1 (1-based); value line k follows k lines on.
  std::string_view file_line = nth_line(text.substr(static_cast<std::size_t>(m.pos)), line + 1);
  if (!file_line.empty() && file_line.back() == '\r') file_line.remove_suffix(1);
  if (file_line.size() < value_line.size() ||
      file_line.substr(file_line.size() - value_line.size()) != value_line) {
    return std::nullopt;
  }
  YAML::Mark at = m;
  at.line = m.line + line;
  at.column = static_cast<int>(file_line.size() - value_line.size()) + column - 1;
  return at;
}

std::optional<YAML::Mark> on_one_line(const Field& f, const std::string& value, int column) {
  const std::string_view text = f.source().text;
  const YAML::Mark& m = f.mark();
  const auto pos = static_cast<std::size_t>(m.pos);
  YAML::Mark at = m;
  if (text.compare(pos, value.size(), value) == 0) {
    at.column = m.column + column - 1;
    return at;
  }
  const char quote = text[pos];
  if ((quote == '"' || quote == '\'') && text.compare(pos + 1, value.size(), value) == 0 &&
      pos + 1 + value.size() < text.size() && text[pos + 1 + value.size()] == quote) {
    at.column = m.column + column;
    return at;
  }
  return std::nullopt;
}

}  // namespace

std::optional<YAML::Mark> scalar_position(const Field& f, const std::string& value, int line,
                                          int column) {
  const YAML::Mark& m = f.mark();
  if (m.is_null() || line < 1 || column < 1) return std::nullopt;
  if (static_cast<std::size_t>(m.pos) >= f.source().text.size()) return std::nullopt;
  if (f.source().text[static_cast<std::size_t>(m.pos)] == '|') {
    return in_block(f, value, line, column);
  }
  if (line != 1 || value.find('\n') != std::string::npos) return std::nullopt;
  return on_one_line(f, value, column);
}

}  // namespace kq::spec_detail
