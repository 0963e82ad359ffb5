#include "report/columns.hpp"

#include <cstdio>

namespace kq {
namespace {

std::string num(const char* f, double x) {
  char b[48];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

CellValue number(std::optional<double> v) {
  CellValue c;
  c.number = v;
  return c;
}
CellValue number(double v) { return number(std::optional<double>(v)); }
CellValue speedup(const std::optional<Speedup>& s) {
  CellValue c;
  c.speedup = s;
  return c;
}
CellValue text(const std::string& s) {
  CellValue c;
  c.text = s;
  return c;
}
CellValue spread(double from, double to) {
  CellValue c;
  c.number = from;
  c.number2 = to;
  return c;
}

// The timing loop's output checks: "ok", "ok (12 checked)" or "WRONG: what it saw".
CellValue loop_output(const TimingCell& c) {
  CellValue v;
  if (!c.recheck_ok) return v;
  if (!*c.recheck_ok) {
    v.text = "WRONG: " + c.recheck_message.value_or("");
    v.bad = true;
  } else {
    v.text = c.checked ? "ok (" + std::to_string(*c.checked) + " checked)" : "ok";
  }
  return v;
}

}  // namespace

std::string format_seconds(double s) {
  if (s >= 1000) return num("%.0f s", s);  // a campaign's hours: "12043 s", not "1.2e+04 s"
  if (s >= 1) return num("%.3g s", s);
  if (s >= 1e-3) return num("%.3g ms", s * 1e3);
  if (s >= 1e-6) return num("%.3g us", s * 1e6);
  return num("%.3g ns", s * 1e9);
}

std::string format_bytes(double bytes) {
  return bytes >= 1e9 ? num("%.3g GB", bytes / 1e9) : num("%.3g MB", bytes / 1e6);
}

std::string format_duration(double s, Markup m) {
  std::string t = format_seconds(s);
  if (m == Markup::html)
    if (auto p = t.find(" us"); p != std::string::npos) t.replace(p, 3, " \u00b5s");
  return t;
}

const std::vector<Column>& timing_columns() {
  static const std::vector<Column> columns = {
      {"arm", Hint::text, [](const TimingCell& c) { return text(c.arm); }},
      {"samples", Hint::count,
       [](const TimingCell& c) { return number(static_cast<double>(c.n)); }},
      {"median", Hint::duration, [](const TimingCell& c) { return number(c.median_s); }},
      {"min", Hint::duration, [](const TimingCell& c) { return number(c.min_s); }},
      {"IQR", Hint::spread, [](const TimingCell& c) { return spread(c.q1_s, c.q3_s); }},
      {"noise", Hint::fraction, [](const TimingCell& c) { return number(c.rel_noise); }},
      {"GB/s", Hint::rate, [](const TimingCell& c) { return number(c.gbps); }},
      {"% of light", Hint::percentage, [](const TimingCell& c) { return number(c.pct_light); },
       false},
      {"GFLOP/s", Hint::rate,
       [](const TimingCell& c) { return number(c.tflops ? *c.tflops * 1e3 : c.tflops); }, false},
      {"% of vendor GEMM", Hint::percentage,
       [](const TimingCell& c) { return number(c.pct_compute); }, false},
      {"graph replay per call", Hint::duration,
       [](const TimingCell& c) { return number(c.graph_median_s); }, false},
      {"host enqueue", Hint::duration, [](const TimingCell& c) { return number(c.host_median_s); },
       false},
      // Side by side: a win over eager execution alone may disappear against the baseline.
      {"speed-up vs eager (95% CI)", Hint::ratio_interval,
       [](const TimingCell& c) { return speedup(c.eager_speedup); }, false},
      {"speed-up vs baseline (95% CI)", Hint::ratio_interval,
       [](const TimingCell& c) { return speedup(c.speedup); }},
      {"loop output", Hint::check, loop_output},
  };
  return columns;
}

Cell format_cell(const Column& c, const TimingCell& cell, Markup m) {
  const CellValue v = c.value(cell);
  if (!v.has_value()) return {"", c.hint != Hint::text && c.hint != Hint::check};
  const double x = v.number.value_or(0.0);
  switch (c.hint) {
    case Hint::spread:
      return {format_duration(v.number2.value_or(0.0) - x, m), true};
    case Hint::count:
      return {std::to_string(static_cast<long long>(x)), true};
    case Hint::duration:
      return {format_duration(x, m), true};
    case Hint::rate:
      return {num("%.1f", x), true};
    case Hint::fraction:
      return {num("%.1f%%", 100 * x), true};
    case Hint::percentage:
      return {num("%.1f%%", x), true};
    case Hint::ratio_interval: {
      const char* times = m == Markup::html ? "\u00d7" : "x";
      return {num("%.2f", v.speedup->ratio) + times + " (" + num("%.2f", v.speedup->lo) + "\u2013" +
                  num("%.2f", v.speedup->hi) + ")",
              true};
    }
    case Hint::check:
      return {v.text.value_or(""), false, v.bad};
    case Hint::text:
      return {v.text.value_or("")};
  }
  return {};
}

std::vector<const Column*> shown_columns(const std::vector<TimingCell>& cells) {
  std::vector<const Column*> shown;
  for (const Column& c : timing_columns()) {
    bool any = c.always;
    for (const TimingCell& cell : cells) any = any || c.value(cell).has_value();
    if (any) shown.push_back(&c);
  }
  return shown;
}

std::string compute_light_text(const TimingRow& row) {
  if (!row.compute_light_tflops) return "";
  std::string t = ", compute light (the vendor GEMM, " + row.compute_light_what.value_or("") +
                  ", same run): " + num("%.1f", *row.compute_light_tflops) + " TFLOP/s";
  if (row.bound && row.ridge && row.flops && row.bytes > 0) {
    t += "; roofline: " + *row.bound + "-bound (" + num("%.3g", *row.flops / row.bytes) +
         " FLOP/byte, ridge " + num("%.3g", *row.ridge) + "), the " +
         (*row.bound == "compute" ? "vendor GEMM" : "device copy") + " its light";
  }
  return t;
}

}  // namespace kq
