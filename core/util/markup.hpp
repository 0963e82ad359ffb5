// Text for XML and HTML: the five characters markup reserves escaped, and control characters
// (invalid in XML 1.0) replaced by spaces, tabs and newlines kept.
#pragma once
#include <string>
#include <string_view>

namespace kq {

inline std::string escape_markup(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
    }
  }
  return o;
}

}  // namespace kq
