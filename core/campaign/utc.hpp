// The current time as UTC ISO 8601 ("2026-12-04T05:20:00Z"), for the campaign's records.
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

}  // namespace kq::campaign
