#include "report/report_html.hpp"

#include "qualify/expectation.hpp"

#include <cctype>
#include <cstdio>
#include <map>
#include <sstream>
#include <string_view>

#include "report/columns.hpp"
#include "report/embedded.hpp"
#include "report/report.hpp"
#include "report/summary.hpp"
#include "util/markup.hpp"

namespace kq {
namespace {

using nlohmann::json;

const char* kStyle = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #222; max-width: 1280px; margin: 1.5em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.3em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.8em; }
h3 { margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #fafafa; }
ul.meta { padding-left: 1.2em; color: #444; }
code { font-size: 12px; }
.decision { background: #eef6ee; border-left: 4px solid #2a2; padding: 0.6em 1em; }
.note { color: #555; font-size: 13px; max-width: 70em; }
.bad { color: #b00; font-weight: 600; }
.error { background: #fee; border: 1px solid #c00; color: #900; padding: 0.5em 1em; }
section.plot { margin: 1em 0 2em; }
.chart { position: relative; width: 100%; }
.panel h4 { margin: 0.9em 0 0.2em; font-size: 14px; }
footer { margin-top: 3em; color: #777; font-size: 12px; }
)";

std::string text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  const auto& v = j[key];
  return escape_markup(v.is_string() ? v.get<std::string>() : v.dump());
}

std::string num(double x, const char* f = "%.2f") {
  char b[48];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// "1048576 (2<sup>20</sup>)" for a power of two, else the number.
std::string size_html(std::int64_t n) {
  std::string s = std::to_string(n);
  if (n > 1 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t{1} << k) < n) ++k;
    s += " (2<sup>" + std::to_string(k) + "</sup>)";
  }
  return s;
}

// JSON inside <script type="application/json">: '<' only occurs in strings, where \u003c is the
// same character, so the text can never close the script element.
std::string script_json(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace), o;
  o.reserve(s.size());
  for (char c : s) o += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return o;
}

// A script's text may not contain "</script"; inside JavaScript strings and regexes "<\/" is the
// same text.
std::string script_text(std::string_view js) {
  std::string o(js);
  for (std::size_t p = 0; (p = o.find("</", p)) != std::string::npos; p += 3) {
    std::string tail = o.substr(p + 2, 6);
    for (auto& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (tail == "script") o.replace(p, 2, "<\\/");
  }
  return o;
}

void header(std::ostringstream& h, const json& s) {
  const json kq = s.value("kq", json::object());
  const json m = s.value("machine", json::object());
  h << "<h1>kq run: " << text(s, "op") << escape_markup(element_types(s))
    << "</h1>\n<ul class=\"meta\">\n";
  h << "<li>started: " << text(s, "started") << "</li>\n";
  h << "<li>kq " << text(kq, "version") << ", commit <code>" << text(kq, "commit") << "</code>"
    << (kq.value("dirty", false) ? " (dirty)" : "") << "</li>\n";
  h << "<li>spec sha256: <code>" << text(s, "spec_sha256") << "</code></li>\n";
  h << "<li>machine: " << text(m, "hostname") << ", " << text(m, "cpu") << ", "
    << m.value("cores", 0) << " cores";
  if (m.contains("gpus") && !m["gpus"].empty())
    for (const auto& g : m["gpus"])
      h << "; " << text(g, "name") << " (" << g.value("sms", 0) << " SMs)";
  else
    h << "; no usable GPU (" << text(m, "cuda_unusable") << ")";
  h << "</li>\n";
  // What each plugin said of its environment (kq_plugin_environment): Python, torch, Triton.
  const json environment = s.value("plugin_environment", json::object());
  for (const auto& [plugin, facts] : environment.items()) {
    h << "<li>plugin " << escape_markup(plugin) << ":";
    std::string sep = " ";
    for (const auto& [key, value] : facts.items()) {
      h << sep << escape_markup(key) << " "
        << escape_markup(value.is_string() ? value.get<std::string>() : value.dump());
      sep = ", ";
    }
    h << "</li>\n";
  }
  h << "<li>run directory: <code>" << text(s, "run_dir") << "</code></li>\n</ul>\n";
}

// A list of arms grouped by reason (summary's "declined" or "skipped"), under its title.
void by_reason(std::ostringstream& h, const json& s, const std::string& key,
               const std::string& title) {
  const json groups = s.value(key, json::array());
  if (groups.empty()) return;
  h << "<p>" << escape_markup(title) << ":</p>\n<ul>\n";
  for (const auto& d : groups) {
    h << "<li>";
    for (std::size_t i = 0; i < d["arms"].size(); ++i)
      h << (i ? ", " : "") << escape_markup(d["arms"][i].get<std::string>());
    h << ": " << text(d, "reason") << "</li>\n";
  }
  h << "</ul>\n";
}

void qualification(std::ostringstream& h, const json& s) {
  const json hl = s.value("headline", json::object());
  h << "<h2>Qualification</h2>\n<p><b>" << hl.value("in_contract_cases_passed", 0) << " of "
    << hl.value("in_contract_cases", 0) << "</b> in-contract cases passed" << skipped_note(hl)
    << ", <b>" << hl.value("out_of_contract_refused", 0) << " of "
    << hl.value("out_of_contract_cases", 0)
    << "</b> out-of-contract inputs refused (good arms); <b>" << hl.value("good_qualified", 0)
    << " of " << hl.value("good_total", 0) << "</b> good arms qualified; <b>"
    << hl.value("broken_rejected", 0) << " of " << hl.value("broken_total", 0)
    << "</b> broken candidates rejected by their declared check.</p>\n";
  h << "<table>\n<tr><th>arm</th><th>family</th><th>device</th><th>verdict</th><th>passed</th>"
       "<th>refused</th><th>failed</th><th>skipped</th><th>check</th><th>case</th><th>detail</th>"
       "</tr>\n";
  for (const auto& a : s.value("arms", json::array())) {
    const json c = a.value("counts", json::object());
    const std::string v = a.value("verdict", "");
    if (v == "unsupported" || v == "skipped") continue;  // listed once below, by reason
    bool bad = !known_broken(a.value("family", ""), a.value("expected_rejection", "")) &&
               v != "qualified" && v != "skipped" && v != "unsupported" && v != "not run";
    h << "<tr><td>" << text(a, "name") << "</td><td>" << text(a, "family") << "</td><td>"
      << text(a, "device") << "</td><td" << (bad ? " class=\"bad\"" : "") << ">"
      << escape_markup(v);
    if (a.contains("caught") && !a["caught"].is_null())
      h << (a["caught"].get<bool>() ? " (as expected)"
                                    : " <span class=\"bad\">(NOT caught by " +
                                          text(a, "expected_rejection") + ")</span>");
    h << "</td><td class=\"n\">" << c.value("passed", 0) << "</td><td class=\"n\">"
      << c.value("refused", 0) << "</td><td class=\"n\">" << c.value("failed", 0)
      << "</td><td class=\"n\">" << c.value("skipped", 0) << "</td><td>" << text(a, "check")
      << "</td><td>" << text(a, "case") << "</td><td>" << text(a, "detail") << "</td></tr>\n";
  }
  h << "</table>\n";
  by_reason(h, s, "declined", "Not offered for this spec (unsupported)");
  by_reason(h, s, "skipped", "Skipped on this machine");
  if (const json errors = s.value("load_errors", json::array()); !errors.empty()) {
    h << "<p>Did not load:</p>\n<ul>\n";
    for (const auto& e : errors)
      h << "<li>" << text(e, "file") << ": " << text(e, "message") << "</li>\n";
    h << "</ul>\n";
  }

  bool any_sanitizer = false, any_artifacts = false;
  for (const auto& a : s.value("arms", json::array())) {
    any_sanitizer |= a.contains("sanitizer");
    any_artifacts |= a.contains("artifacts");
  }
  if (any_sanitizer) {
    h << "<h3>compute-sanitizer</h3>\n<table>\n<tr><th>arm</th><th>tool</th><th>errors</th>"
         "<th>first error</th><th>log</th></tr>\n";
    for (const auto& a : s["arms"])
      for (const auto& f : a.value("sanitizer", json::array()))
        h << "<tr><td>" << text(a, "name") << "</td><td>" << text(f, "tool")
          << "</td><td class=\"n\">" << f.value("errors", -1L) << "</td><td>" << text(f, "first")
          << "</td><td>logs/" << text(f, "log") << "</td></tr>\n";
    h << "</table>\n";
  }
  if (any_artifacts) {
    h << "<h3>Artifacts</h3>\n<table>\n<tr><th>arm</th><th>files in artifacts/&lt;arm&gt;/</th>"
         "<th>SASS</th></tr>\n";
    for (const auto& a : s["arms"]) {
      if (!a.contains("artifacts")) continue;
      std::string files;
      for (const auto& f : a["artifacts"].value("files", json::array()))
        files += (files.empty() ? "" : ", ") + escape_markup(f.get<std::string>());
      h << "<tr><td>" << text(a, "name") << "</td><td>" << files << "</td><td>"
        << text(a["artifacts"], "sass") << "</td></tr>\n";
    }
    h << "</table>\n";
  }
}

// A plot's section: drawn by the page's script when `drawable`, else only the note says why.
void plot_section(std::ostringstream& h, const std::string& name, const std::string& title,
                  const std::string& note, bool drawable) {
  h << "<section class=\"plot\" id=\"plot-" << name << "\""
    << (drawable ? " data-plot=\"" + name + "\"" : "") << ">\n<h3>" << title
    << "</h3>\n<p class=\"note\">" << note << "</p>\n";
  if (drawable) h << "<div class=\"chart-host\"></div>\n";
  h << "</section>\n";
}

void plots(std::ostringstream& h, const json& s, bool any_round) {
  bool any_time = false, any_gbps = false, any_light = false, any_speedup = false;
  for (const auto& row : s.value("timing", json::array()))
    for (const auto& a : row.value("arms", json::array())) {
      any_time |= a.value("median_s", 0.0) > 0;
      any_gbps |= a.contains("gbps");
      any_light |= a.contains("pct_light");
      any_speedup |= a.contains("speedup");
    }
  const json decision = s.value("decision", json::object());
  const std::string baseline = escape_markup(decision.value("baseline", ""));

  plot_section(h, "time", "Time per call against size (log-log)",
               any_time ? "Median time per call of single launches, per arm (solid line, points); "
                          "the fastest round (min) as a faint dashed line of the same colour. Both "
                          "axes are logarithmic."
                        : "No timing was recorded.",
               any_time);

  std::string light_note;
  const json light = s.value("light", json::object());
  if (any_light) {
    light_note =
        "Each arm's bandwidth (bytes moved per call over its median time) as a percentage of the "
        "speed of light: the bandwidth of a device-to-device copy measured in the same run. Speed "
        "of light:";
    for (const auto& l : light.value("per_size", json::array()))
      light_note += " " + size_html(l.value("size", std::int64_t{0})) + ": " +
                    num(l.value("gbps", 0.0), "%.1f") + " GB/s (median of " +
                    std::to_string(l.value("n", 0)) + " copies);";
    light_note.back() = '.';
    std::string missing;
    for (const auto& row : s["timing"])
      if (!row.contains("light_gbps"))
        missing += (missing.empty() ? "" : ", ") + size_html(row.value("size", std::int64_t{0}));
    if (!missing.empty()) light_note += " No light was measured at " + missing + ".";
  } else if (any_gbps) {
    light_note =
        "<b>The speed of light was not measured in this run</b> (rounds.jsonl holds no "
        "device-to-device copy records): the bandwidth in GB/s (bytes moved per call over the "
        "median time) is shown instead.";
  } else {
    light_note =
        "No bandwidth: the spec gives no bytes moved per element, or nothing was timed; the speed "
        "of light was not measured.";
  }
  plot_section(
      h, "light",
      any_light ? "% of the speed of light per arm and size" : "Bandwidth per arm and size (GB/s)",
      light_note, any_light || any_gbps);

  plot_section(h, "rounds", "Every round, per arm and size",
               any_round ? "Every timed round of rounds.jsonl, one panel per mode and size: each "
                           "point is one round, spread vertically within its arm's row so that "
                           "equal times stay visible; the black mark is the median. Rounds taken "
                           "while the GPU was throttled, or whose enqueue outlasted the blocking "
                           "kernel's hold, are red crosses, left out of the statistics."
                         : "No rounds were recorded.",
               any_round);

  plot_section(
      h, "speedup", "Speed-up against the baseline (" + baseline + ")",
      any_speedup
          ? "The baseline's median over the arm's median at each size: the bar spans the 95% "
            "bootstrap interval, the thick tick is the estimate. A win counts when the whole bar "
            "is above 1 and the estimate reaches " +
                num(decision.value("min_speedup", 1.0)) + "&times; (the dashed line)."
          : "No speed-up: the baseline " + baseline +
                " was not timed beside another arm in this run.",
      any_speedup);
}

// What one call of each arm launched, from CUPTI; copies or sets inside a call are flagged.
void profile_table(std::ostringstream& h, const json& row) {
  h << "<p>What one call launches (CUPTI):</p>\n<table>\n<tr><th>arm</th><th>kernels</th>"
       "<th>kernel time</th><th>copies / sets in the call</th><th>first kernel</th>"
       "<th>grid &times; block</th><th>registers</th><th>occupancy</th></tr>\n";
  for (const auto& a : row.value("arms", json::array())) {
    if (!a.contains("profile")) continue;
    const json& p = a["profile"];
    h << "<tr><td>" << text(a, "arm") << "</td>";
    if (p.contains("unavailable")) {
      h << "<td colspan=\"7\">" << text(p, "unavailable") << "</td></tr>\n";
      continue;
    }
    const int copies = p.value("memcpys", 0), sets = p.value("memsets", 0);
    h << "<td class=\"n\">" << p.value("kernels", 0) << "</td><td class=\"n\">"
      << format_duration(p.value("kernel_seconds", 0.0), Markup::html) << "</td><td class=\"n"
      << (copies + sets > 0 ? " bad" : "") << "\">" << copies << " / " << sets
      << (copies + sets > 0 ? " (should be none)" : "") << "</td>";
    const json list = p.value("list", json::array());
    if (list.empty()) {
      h << "<td></td><td></td><td></td><td></td></tr>\n";
      continue;
    }
    const json& k = list[0];
    const json grid = k.value("grid", json::array({0})), block = k.value("block", json::array({0}));
    h << "<td>" << escape_markup(k.value("name", "").substr(0, 60)) << "</td><td class=\"n\">"
      << grid[0].get<int>() << " &times; " << block[0].get<int>() << "</td><td class=\"n\">"
      << k.value("registers", 0) << "</td><td class=\"n\">"
      << num(100 * k.value("occupancy", 0.0), "%.0f%%") << "</td></tr>\n";
  }
  h << "</table>\n";
}

// A size's per-arm table: the columns of report/columns.hpp that its rows carry.
void timing_table(std::ostringstream& h, const json& rows) {
  std::vector<const Column*> shown;
  for (const Column& c : timing_columns())
    if (column_shown(c, rows)) shown.push_back(&c);
  h << "<table>\n<tr>";
  for (const Column* c : shown) h << "<th>" << escape_markup(c->title) << "</th>";
  h << "</tr>\n";
  for (const auto& r : rows) {
    h << "<tr>";
    for (const Column* c : shown) {
      const Cell cell = format_cell(*c, r, Markup::html);
      const std::string t = escape_markup(cell.text);
      h << (cell.numeric ? "<td class=\"n\">" : "<td>")
        << (cell.bad ? "<span class=\"bad\">" + t + "</span>" : t) << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</table>\n";
}

void timing_tables(std::ostringstream& h, const json& s) {
  for (const auto& row : s.value("timing", json::array())) {
    h << "<h3 id=\"size-" << row.value("size", std::int64_t{0}) << "\">"
      << size_html(row.value("size", std::int64_t{0})) << " elements";
    if (row.value("bytes", 0.0) > 0)
      h << " (" << num(row.value("bytes", 0.0) / 1e6, "%.3g") << " MB moved per call)";
    h << "</h3>\n<p>rounds: " << row.value("rounds", 0)
      << ", stopped by: " << text(row, "stopped_by");
    if (row.contains("light_gbps"))
      h << ", speed of light (device-to-device copy): "
        << num(row["light_gbps"].get<double>(), "%.1f") << " GB/s";
    if (row.contains("floor_s"))
      h << ", launch floor (an empty kernel, same run): "
        << format_duration(row["floor_s"].get<double>(), Markup::html);
    if (row.contains("host_light_gbps"))
      h << ", host copy beside the CPU arms: " << num(row["host_light_gbps"].get<double>(), "%.1f")
        << " GB/s";
    h << "</p>\n";
    if (const json notes = row.value("notes", json::array()); !notes.empty()) {
      h << "<ul>\n";
      for (const auto& note : notes)
        h << "<li>" << escape_markup(note.get<std::string>()) << "</li>\n";
      h << "</ul>\n";
    }
    timing_table(h, row.value("arms", json::array()));
    bool profile = false;
    for (const auto& a : row.value("arms", json::array())) profile |= a.contains("profile");
    if (profile) profile_table(h, row);
  }
  const json skips = s.value("timing_skips", json::array());
  if (!skips.empty()) {
    h << "<ul>\n";
    for (const auto& k : skips)
      h << "<li>" << text(k, "arm") << " not timed at " << k.value("size", std::int64_t{0}) << ": "
        << text(k, "reason") << "</li>\n";
    h << "</ul>\n";
  }
}

// The samples the page plots: the round and light samples, each saying why it is left out of
// the statistics, if it is (the plots draw those as crosses).
json plotted_samples(const RunData& run) {
  json samples = json::array();
  auto add = [&](json j, LeftOut why) {
    if (why != LeftOut::counted) j["left_out"] = to_string(why);
    samples.push_back(std::move(j));
  };
  for (std::size_t i = 0; i < run.rounds.size(); ++i) add(run.rounds[i], run.round_left_out[i]);
  for (std::size_t i = 0; i < run.light_samples.size(); ++i)
    add(run.light_samples[i], run.light_left_out[i]);
  return samples;
}

}  // namespace

std::string render_html(const json& s, const RunData& run) {
  const json samples = plotted_samples(run);

  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>kq run: "
    << text(s, "op") << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  header(h, s);
  h << "<h2>Decision</h2>\n<p class=\"decision\">"
    << escape_markup(s.value("decision", json::object()).value("sentence", "")) << "</p>\n";
  qualification(h, s);
  h << "<h2>Timing</h2>\n";
  if (!s.value("timing_ran", false))
    h << "<p>No timing was recorded (no qualified arm, or the run stopped before timing).</p>\n";
  plots(h, s, !run.rounds.empty());
  h << "<h2>Timing per size</h2>\n";
  timing_tables(h, s);
  h << "<footer>Written by kq " << text(s.value("kq", json::object()), "version")
    << " from the run directory's summary.json and rounds.jsonl (both inline in this page, as "
       "JSON). Plots drawn by <a href=\"https://www.chartjs.org\">Chart.js</a> <span "
       "id=\"chartjs-version\"></span> (MIT licence), embedded in this file: the page needs no "
       "network.</footer>\n";
  h << "<script type=\"application/json\" id=\"kq-summary\">" << script_json(s) << "</script>\n";
  h << "<script type=\"application/json\" id=\"kq-rounds\">" << script_json(samples)
    << "</script>\n";
  h << "<script>\n" << script_text(chartjs_source()) << "\n</script>\n";
  h << "<script>\n" << script_text(report_html_script()) << "\n</script>\n";
  h << "</body>\n</html>\n";
  return h.str();
}

}  // namespace kq
