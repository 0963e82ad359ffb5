// The summary's per-arm timing rows (summary.json timing[].arms[]) as a table whose columns
// carry a format hint, as nvbench's summaries do: the summary decides what a column holds, the
// printers (report.md, report.html) only format each hint in their markup. A new column is one
// line in timing_columns().
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

enum class Hint {
  text,            // as it is
  count,           // an integer
  duration,        // seconds: "7.87 us"
  spread,          // the distance between two durations, key and key2: the IQR
  byte_rate,       // GB/s (1e9 bytes per second)
  fraction,        // shown in percent: 0.05 -> "5.0%"
  percentage,      // already in percent: 5 -> "5.0%"
  ratio_interval,  // key, key_lo, key_hi: "1.05x (1.01-1.09)"
  check,           // the timing checks' verdict on the loop's outputs: ok / WRONG
};

struct Column {
  const char* title;
  Hint hint;
  const char* key;
  const char* key2 = nullptr;  // spread: the upper end
  bool always = true;          // false: shown only when a row of the table carries key
};

// The per-arm timing table's columns, in the reports' order.
const std::vector<Column>& timing_columns();

enum class Markup { markdown, html };

struct Cell {
  std::string text;  // unescaped; empty when the row lacks the column's value
  bool numeric = false;
  bool bad = false;  // a value the reader must not miss (a wrong output)
};

Cell format_cell(const Column& c, const nlohmann::json& row, Markup m);

// Whether a table of these rows shows the column.
bool column_shown(const Column& c, const nlohmann::json& rows);

// "738 us", "4.1 ms", "12 ns"; in HTML "738 µs".
std::string format_seconds(double s);
std::string format_duration(double s, Markup m);

}  // namespace kq
