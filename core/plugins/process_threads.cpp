#include "plugins/process_threads.hpp"

#include <filesystem>
#include <fstream>

namespace kq {

std::set<long> process_threads() {
  std::set<long> ids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    try {
      ids.insert(std::stol(e.path().filename().string()));
    } catch (const std::exception&) {
    }
  }
  return ids;
}

std::string threads_started(const std::set<long>& before, const std::set<long>& now) {
  int n = 0;
  std::string names;
  for (long id : now) {
    if (before.count(id)) continue;
    ++n;
    std::string name;
    std::getline(std::ifstream("/proc/self/task/" + std::to_string(id) + "/comm"), name);
    names += (names.empty() ? "" : ", ") + (name.empty() ? std::to_string(id) : name);
  }
  if (n == 0) return {};
  return std::to_string(n) + " thread(s) still running (" + names + ")";
}

}  // namespace kq
