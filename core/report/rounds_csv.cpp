// rounds.csv: every timed sample of rounds.jsonl, one row each, its fields as columns (arm,
// size, mode, round, seconds first), and why it was left out of the statistics, where it was.
#include <algorithm>
#include <set>

#include "report/printer.hpp"

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

class RoundsCsvPrinter : public Printer {
 public:
  std::string file_name() const override { return "rounds.csv"; }
  std::string print(const RunSummary&, const RunData& run) const override {
    const std::vector<std::string> first = {"arm", "size", "mode", "round", "seconds"};
    // Each sample's JSON form (record/records.hpp), so that a new field is a new column.
    std::vector<nlohmann::json> rounds;
    for (std::size_t i = 0; i < run.rounds.size(); ++i) {
      nlohmann::json r = run.rounds[i];
      r.erase("type");
      if (run.round_left_out[i] != LeftOut::counted)
        r["left_out"] = to_string(run.round_left_out[i]);
      rounds.push_back(std::move(r));
    }
    std::set<std::string> extra;
    for (const auto& r : rounds)
      for (const auto& [k, v] : r.items())
        if (std::find(first.begin(), first.end(), k) == first.end()) extra.insert(k);
    std::vector<std::string> columns = first;
    columns.insert(columns.end(), extra.begin(), extra.end());
    std::string out;
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
    out += "\n";
    for (const auto& r : rounds) {
      for (std::size_t i = 0; i < columns.size(); ++i) {
        if (i) out += ",";
        if (auto it = r.find(columns[i]); it != r.end()) out += csv_cell(*it);
      }
      out += "\n";
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Printer> rounds_csv_printer() { return std::make_unique<RoundsCsvPrinter>(); }

}  // namespace kq
