#include "util/env_number.hpp"

#include <charconv>
#include <cstdlib>

namespace kq {

std::optional<std::uint64_t> whole_number(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

std::optional<std::uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return whole_number(v);
}

}  // namespace kq
