#include "report/rounds_csv.hpp"

#include <algorithm>
#include <set>

namespace kq {
namespace {

// RFC 4180: a cell holding a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string render_rounds_csv(const std::vector<nlohmann::json>& rounds) {
  const std::vector<std::string> first = {"arm", "size", "mode", "round", "seconds"};
  std::set<std::string> extra;
  for (const auto& r : rounds) {
    if (!r.is_object() || r.value("type", "") != "round") continue;
    for (const auto& [k, v] : r.items())
      if (k != "type" && std::find(first.begin(), first.end(), k) == first.end()) extra.insert(k);
  }
  std::vector<std::string> columns = first;
  columns.insert(columns.end(), extra.begin(), extra.end());
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
  out += "\n";
  for (const auto& r : rounds) {
    if (!r.is_object() || r.value("type", "") != "round") continue;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i) out += ",";
      if (auto it = r.find(columns[i]); it != r.end()) out += csv_cell(*it);
    }
    out += "\n";
  }
  return out;
}

}  // namespace kq
