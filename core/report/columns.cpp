#include "report/columns.hpp"

#include <cstdio>

namespace kq {
namespace {

std::string num(const char* f, double x) {
  char b[48];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

double number(const nlohmann::json& row, const std::string& key) { return row.value(key, 0.0); }

Cell check_cell(const nlohmann::json& row) {
  if (!row.value("recheck_ok", false))
    return {"WRONG: " + row.value("recheck_message", ""), false, true};
  if (!row.contains("checked")) return {"ok"};
  return {"ok (" + row["checked"].dump() + " checked)"};
}

}  // namespace

std::string format_seconds(double s) {
  if (s >= 1) return num("%.3g s", s);
  if (s >= 1e-3) return num("%.3g ms", s * 1e3);
  if (s >= 1e-6) return num("%.3g us", s * 1e6);
  return num("%.3g ns", s * 1e9);
}

std::string format_duration(double s, Markup m) {
  std::string t = format_seconds(s);
  if (m == Markup::html)
    if (auto p = t.find(" us"); p != std::string::npos) t.replace(p, 3, " \u00b5s");
  return t;
}

const std::vector<Column>& timing_columns() {
  static const std::vector<Column> columns = {
      {"arm", Hint::text, "arm"},
      {"samples", Hint::count, "n"},
      {"median", Hint::duration, "median_s"},
      {"min", Hint::duration, "min_s"},
      {"IQR", Hint::spread, "q1_s", "q3_s"},
      {"noise", Hint::fraction, "rel_noise"},
      {"GB/s", Hint::byte_rate, "gbps"},
      {"% of light", Hint::percentage, "pct_light", nullptr, false},
      {"graph replay per call", Hint::duration, "graph_median_s", nullptr, false},
      {"host enqueue", Hint::duration, "host_median_s", nullptr, false},
      // Side by side: a win over eager execution alone may disappear against the baseline.
      {"speed-up vs eager (95% CI)", Hint::ratio_interval, "eager_speedup", nullptr, false},
      {"speed-up vs baseline (95% CI)", Hint::ratio_interval, "speedup"},
      {"loop output", Hint::check, "recheck_ok"},
  };
  return columns;
}

Cell format_cell(const Column& c, const nlohmann::json& row, Markup m) {
  const std::string key = c.key;
  const bool has = row.contains(key) && !row[key].is_null();
  if (c.hint == Hint::spread)
    return {format_duration(number(row, c.key2) - number(row, key), m), true};
  if (c.hint == Hint::count) return {std::to_string(row.value(key, 0)), true};
  if (!has) return {"", c.hint != Hint::text && c.hint != Hint::check};
  switch (c.hint) {
    case Hint::duration:
      return {format_duration(number(row, key), m), true};
    case Hint::byte_rate:
      return {num("%.1f", number(row, key)), true};
    case Hint::fraction:
      return {num("%.1f%%", 100 * number(row, key)), true};
    case Hint::percentage:
      return {num("%.1f%%", number(row, key)), true};
    case Hint::ratio_interval: {
      const char* times = m == Markup::html ? "\u00d7" : "x";
      return {num("%.2f", number(row, key)) + times + " (" + num("%.2f", number(row, key + "_lo")) +
                  "\u2013" + num("%.2f", number(row, key + "_hi")) + ")",
              true};
    }
    case Hint::check:
      return check_cell(row);
    default: {
      const auto& v = row[key];
      return {v.is_string() ? v.get<std::string>() : v.dump()};
    }
  }
}

bool column_shown(const Column& c, const nlohmann::json& rows) {
  if (c.always) return true;
  for (const auto& r : rows)
    if (r.contains(c.key)) return true;
  return false;
}

}  // namespace kq
