// The current time as UTC ISO 8601 ("2026-12-04T05:20:00Z"), for the campaign's records, and back.
#pragma once
#include <ctime>
#include <string>

namespace kq::campaign {

inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char iso[32];
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return iso;
}

// Seconds since the epoch of utc_now()'s text; -1 where it is not that form.
inline double utc_seconds(const std::string& iso) {
  std::tm tm{};
  const char* end = strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') return -1;
  return static_cast<double>(timegm(&tm));
}

}  // namespace kq::campaign
