// The per-arm timing table (a TimingRow's cells, summary/run_summary.hpp) as columns that carry a
// format hint, as nvbench's summaries do: the summary decides what a column holds, the printers
// (markdown, HTML) only format each hint in their markup. A new column is one line in
// timing_columns().
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "summary/run_summary.hpp"

namespace kq {

enum class Hint {
  text,            // as it is
  count,           // an integer
  duration,        // seconds: "7.87 us"
  spread,          // the distance between two durations: the IQR
  rate,            // GB/s (1e9 bytes per second), TFLOP/s
  fraction,        // shown in percent: 0.05 -> "5.0%"
  percentage,      // already in percent: 5 -> "5.0%"
  ratio_interval,  // a speed-up and its interval: "1.05x (1.01-1.09)"
  check,           // the timing checks' verdict on the loop's outputs: ok / WRONG
};

// What a cell holds before it is formatted; empty when the arm has no value for the column.
struct CellValue {
  std::optional<double> number, number2;  // number2: spread's upper end
  std::optional<Speedup> speedup;
  std::optional<std::string> text;
  bool bad = false;  // check: the loop's output was wrong
  bool has_value() const { return number || speedup || text; }
};

struct Column {
  const char* title;
  Hint hint;
  CellValue (*value)(const TimingCell&);
  bool always = true;  // false: shown only when a cell of the table has a value
};

// The per-arm timing table's columns, in the reports' order.
const std::vector<Column>& timing_columns();

enum class Markup { markdown, html };

struct Cell {
  std::string text;  // unescaped; empty when the cell has no value
  bool numeric = false;
  bool bad = false;  // a value the reader must not miss (a wrong output)
};

Cell format_cell(const Column& c, const TimingCell& cell, Markup m);

// The columns a table of these cells shows.
std::vector<const Column*> shown_columns(const std::vector<TimingCell>& cells);

// "738 us", "4.1 ms", "12 ns", "2580 s"; in HTML "738 µs".
std::string format_seconds(double s);
// "268 MB", "3.22 GB".
std::string format_bytes(double bytes);

// A product's point: ", compute light (the vendor GEMM, bf16 4096^3 (f32 accumulation), same
// run): 640 TFLOP/s; roofline: compute-bound (1365 FLOP/byte, ridge 134)", or "" without one.
std::string compute_light_text(const TimingRow& row);
std::string format_duration(double s, Markup m);

}  // namespace kq
