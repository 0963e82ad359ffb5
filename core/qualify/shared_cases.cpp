#include "qualify/shared_cases.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "qualify/case_data.hpp"
#include "util/host_memory.hpp"

namespace kq {

std::uint64_t shared_cases_budget() { return available_host_bytes() / 2; }

SharedCases SharedCases::compute(const Spec& spec, const std::vector<Case>& cases,
                                 std::uint64_t budget_bytes, const std::filesystem::path& log) {
  SharedCases s;
  std::ofstream out;
  if (!log.empty()) out.open(log, std::ios::app);
  std::uint64_t used = 0;
  for (const Case& c : cases) {
    if (s.cases_.count(c.name)) continue;
    const CaseDataLayout layout(spec, c);
    if (layout.total_bytes() == 0) continue;  // no elements: nothing to share
    if (used + layout.total_bytes() > budget_bytes) {
      if (out)
        out << "case " << c.name << ": " << layout.total_bytes()
            << " bytes, past the budget: each worker computes its own\n";
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    s.cases_.emplace(c.name, SealedMemory(c.name, layout.total_bytes(), [&](unsigned char* dst) {
                       compute_case_data(spec, c, layout, dst);
                     }));
    used += layout.total_bytes();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out) {
      char line[160];
      std::snprintf(line, sizeof line, "case %s: %zu bytes in %.2f ms\n", c.name.c_str(),
                    layout.total_bytes(), 1e3 * secs);
      out << line;
    }
  }
  return s;
}

std::string SharedCases::argument() const {
  std::string a;
  for (const auto& [name, m] : cases_)
    a += (a.empty() ? "" : ",") + name + "=" + std::to_string(m.fd()) + ":" +
         std::to_string(m.size());
  return a;
}

SharedCases SharedCases::adopt(const std::string& argument) {
  SharedCases s;
  std::istringstream items(argument);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.rfind('='), colon = item.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq)
      throw std::runtime_error("--case-data: malformed item '" + item + "'");
    const int fd = std::stoi(item.substr(eq + 1, colon - eq - 1));
    const auto bytes = static_cast<std::size_t>(std::stoull(item.substr(colon + 1)));
    s.cases_.emplace(item.substr(0, eq), SealedMemory::adopt(fd, bytes));
  }
  return s;
}

std::uint64_t SharedCases::bytes() const {
  std::uint64_t n = 0;
  for (const auto& [name, m] : cases_) n += m.size();
  return n;
}

const unsigned char* SharedCases::find(const std::string& case_name) const {
  auto it = cases_.find(case_name);
  return it == cases_.end() ? nullptr : it->second.data();
}

}  // namespace kq
