#include "util/env_number.hpp"

#include <cerrno>
#include <cstdlib>

namespace kq {

std::optional<std::uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v < '0' || *v > '9') return std::nullopt;  // also "-1", " 1", ""
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return static_cast<std::uint64_t>(n);
}

}  // namespace kq
