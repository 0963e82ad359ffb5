#include "spec/text_checks.hpp"

#include <cstdio>

#include "spec/spec.hpp"

namespace kq::spec_detail {
namespace {

// Where a byte offset is, 1-based; the column counts characters (UTF-8 lead bytes).
struct Position {
  int line = 1;
  int column = 1;
};

// The length of the well-formed UTF-8 sequence at `i` (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
  };
  const unsigned lead = byte(0);
  if (lead < 0x80) return 1;
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
  if (lead == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if (lead == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (lead >= 0xE1 && lead <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (lead == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (lead >= 0xF1 && lead <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (lead == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// YAML admits tab, line feed and carriage return among the C0 controls, and not DEL.
bool is_forbidden_control(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F;
}

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", c);
  return buf;
}

[[noreturn]] void fail_at(const Source& src, const Position& at, const std::string& message) {
  throw SpecError(src.file, at.line, at.column, "", message);
}

}  // namespace

std::string too_large_message(const std::string& size) {
  return "the file is " + size + " bytes; a spec is at most " + std::to_string(kMaxSpecBytes) +
         " bytes (1 MiB)";
}

void check_text(const Source& src) {
  const std::string_view text = src.text;
  if (text.size() > kMaxSpecBytes) {
    fail_at(src, Position{}, too_large_message(std::to_string(text.size())));
  }
  Position at;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) {
      fail_at(src, at, "a NUL byte: a spec is UTF-8 text (is this file binary, or UTF-16?)");
    }
    if (is_forbidden_control(c)) {
      fail_at(src, at, "control character " + hex_byte(c) + " is not allowed in YAML text");
    }
    const std::size_t len = utf8_sequence(text, i);
    if (len == 0) {
      fail_at(src, at, "invalid UTF-8 (byte " + hex_byte(c) + "): a spec is UTF-8 text");
    }
    if (c == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
    i += len;
  }
}

}  // namespace kq::spec_detail
