#include "qualify/sanitizer_log.hpp"

#include <fstream>
#include <regex>

namespace kq {

nlohmann::json read_sanitizer_log(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, first;
  long errors = -1;
  static const std::regex summary(R"(ERROR SUMMARY:\s+(\d+) error)");
  static const std::regex race(R"(RACECHECK SUMMARY:.*\((\d+) error)");
  std::smatch m;
  while (std::getline(in, line)) {
    const bool is_summary = line.find("SUMMARY") != std::string::npos;
    if (std::regex_search(line, m, summary) || std::regex_search(line, m, race))
      errors = std::stol(m[1]);
    if (first.empty() && !is_summary && line.find("=========") == 0 &&
        (line.find("Invalid") != std::string::npos || line.find("Race") != std::string::npos ||
         line.find("Uninitialized") != std::string::npos ||
         line.find("Barrier") != std::string::npos || line.find("error") != std::string::npos ||
         line.find("Error") != std::string::npos))
      first = line.substr(10);
  }
  return {{"errors", errors}, {"first", first}};
}

}  // namespace kq
