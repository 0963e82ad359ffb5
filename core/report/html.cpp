// report.html: the decision first, then the tables of report.md and plots of the timing, in one
// self-contained file (Chart.js and the data are inline; no network). Plots: time against size
// per arm (log-log, median and min), % of the speed of light (GB/s when the light was not
// measured), every round per arm and size (one panel per device), and the speed-up against the
// baseline with its 95% bootstrap interval.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "qualify/expectation.hpp"
#include "report/columns.hpp"
#include "report/embedded.hpp"
#include "report/printer.hpp"
#include "report/report_text.hpp"
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
details summary { cursor: pointer; color: #555; }
.decision { background: #eef6ee; border-left: 4px solid #2a2; padding: 0.6em 1em; }
.note { color: #555; font-size: 13px; max-width: 70em; }
.bad { color: #b00; font-weight: 600; }
.error { background: #fee; border: 1px solid #c00; color: #900; padding: 0.5em 1em; }
section.plot { margin: 1em 0 2em; }
.chart { position: relative; width: 100%; }
.panel h4 { margin: 0.9em 0 0.2em; font-size: 14px; }
footer { margin-top: 3em; color: #777; font-size: 12px; }
)";

std::string esc(const std::string& s) { return escape_markup(s); }
std::string esc(const std::optional<std::string>& s) { return escape_markup(s.value_or("")); }

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

void header(std::ostringstream& h, const RunSummary& s) {
  h << "<h1>kq run: " << esc(s.op) << esc(element_types(s)) << "</h1>\n<ul class=\"meta\">\n";
  h << "<li>started: " << esc(s.started) << "</li>\n";
  h << "<li>kq " << esc(s.kq.version) << ", commit <code>" << esc(s.kq.commit) << "</code>"
    << (s.kq.dirty ? " (dirty)" : "") << "</li>\n";
  h << "<li>spec sha256: <code>" << esc(s.spec_sha256) << "</code></li>\n";
  h << "<li>machine: " << esc(machine_text(s.machine)) << "</li>\n";
  if (const std::string e = settings_text(s.machine); !e.empty())
    h << "<li>environment: <code>" << esc(e) << "</code></li>\n";
  if (const std::string g = gpu_load_text(s); !g.empty())
    h << "<li>qualification's cases by GPU: " << esc(g) << "</li>\n";
  // What each plugin said of its environment (kq_plugin_environment): Python, torch, Triton.
  for (const std::string& line : environment_lines(s.plugin_environment))
    h << "<li>" << esc(line) << "</li>\n";
  h << "<li>run directory: <code>" << esc(s.run_dir) << "</code></li>\n</ul>\n";
}

// A list of arms grouped by reason (declined or skipped), under its title.
void by_reason(std::ostringstream& h, const std::vector<ReasonGroup>& groups,
               const std::string& title) {
  if (groups.empty()) return;
  h << "<p>" << esc(title) << ":</p>\n<ul>\n";
  for (const ReasonGroup& d : groups)
    h << "<li>" << esc(joined(d.arms)) << ": " << esc(d.reason) << "</li>\n";
  h << "</ul>\n";
}

void verdict_table(std::ostringstream& h, const RunSummary& s) {
  h << "<table>\n<tr><th>arm</th><th>family</th><th>device</th><th>verdict</th><th>passed</th>"
       "<th>refused</th><th>failed</th><th>skipped</th><th>check</th><th>case</th><th>detail</th>"
       "</tr>\n";
  for (const ArmRow& a : s.arms) {
    if (a.verdict == rec::Verdict::unsupported || a.verdict == rec::Verdict::skipped)
      continue;  // listed once below, by reason
    const rec::CaseCounts c = a.counts.value_or(rec::CaseCounts{});
    const bool bad = !known_broken(a.family, a.expected_rejection) && rec::failed(a.verdict);
    h << "<tr><td>" << esc(a.name) << "</td><td>" << esc(a.family) << "</td><td>" << esc(a.device)
      << "</td><td" << (bad ? " class=\"bad\"" : "") << ">"
      << esc(std::string(rec::to_string(a.verdict)));
    if (a.caught == Caught::yes) h << " (as expected)";
    if (a.caught == Caught::no)
      h << " <span class=\"bad\">(NOT caught by " << esc(a.expected_rejection) << ")</span>";
    h << "</td><td class=\"n\">" << c.passed << "</td><td class=\"n\">" << c.refused
      << "</td><td class=\"n\">" << c.failed << "</td><td class=\"n\">" << c.skipped << "</td><td>"
      << esc(a.check) << "</td><td>" << esc(a.case_name) << "</td><td>" << esc(a.detail)
      << "</td></tr>\n";
  }
  h << "</table>\n";
}

void sanitizer_table(std::ostringstream& h, const RunSummary& s) {
  h << "<h3>compute-sanitizer</h3>\n<table>\n<tr><th>arm</th><th>tool</th><th>errors</th>"
       "<th>first error</th><th>log</th></tr>\n";
  for (const ArmRow& a : s.arms)
    for (const auto& f : a.sanitizer)
      h << "<tr><td>" << esc(a.name) << "</td><td>" << esc(f.tool) << "</td><td class=\"n\">"
        << f.errors << "</td><td>" << esc(f.first) << "</td><td>logs/" << esc(f.log)
        << "</td></tr>\n";
  h << "</table>\n";
}

// The files a reader opens first: the arm's identity, then the first of each kind that shows
// what ran (the source kq or the arm generated, PTX, SASS, ptxas's report, a vendor's choice).
std::vector<std::string> key_files(const std::vector<std::string>& files) {
  static const std::vector<std::string> kinds = {"identity.json", ".cu",      "torch_compiled.py",
                                                 ".triton.py",    ".ptx",     ".sass",
                                                 "ptxas.txt",     "chosen.md"};
  std::vector<std::string> key;
  for (const std::string& kind : kinds)
    for (const std::string& f : files)
      if (f.rfind("timing-", 0) != 0 && f.size() >= kind.size() &&
          f.compare(f.size() - kind.size(), kind.size(), kind) == 0) {
        key.push_back(f);
        break;
      }
  return key;
}

// Each arm's artifacts: how many, the key files, and every file folded under them.
void artifacts_table(std::ostringstream& h, const RunSummary& s) {
  h << "<h3>Artifacts</h3>\n<table>\n<tr><th>arm</th><th>files in artifacts/&lt;arm&gt;/</th>"
       "<th>SASS</th></tr>\n";
  for (const ArmRow& a : s.arms) {
    if (!a.artifacts) continue;
    const std::vector<std::string>& files = a.artifacts->files;
    h << "<tr><td>" << esc(a.name) << "</td><td>" << files.size() << " file"
      << (files.size() == 1 ? "" : "s");
    if (const auto key = key_files(files); !key.empty()) h << ": " << esc(joined(key));
    if (!files.empty())
      h << "<details><summary>all " << files.size() << "</summary>" << esc(joined(files))
        << "</details>";
    h << "</td><td>" << esc(a.artifacts->sass) << "</td></tr>\n";
  }
  h << "</table>\n";
}

void qualification(std::ostringstream& h, const RunSummary& s) {
  h << "<h2>Qualification</h2>\n<p>" << headline_text(s.headline, Markup::html) << "</p>\n";
  verdict_table(h, s);
  by_reason(h, s.declined, "Not offered for this spec (unsupported)");
  by_reason(h, s.skipped, "Skipped on this machine");
  if (!s.load_errors.empty()) {
    h << "<p>Did not load:</p>\n<ul>\n";
    for (const LoadErrorRow& e : s.load_errors)
      h << "<li>" << esc(e.file) << ": " << esc(e.message) << "</li>\n";
    h << "</ul>\n";
  }
  bool any_sanitizer = false, any_artifacts = false;
  for (const ArmRow& a : s.arms) {
    any_sanitizer |= !a.sanitizer.empty();
    any_artifacts |= a.artifacts.has_value();
  }
  if (any_sanitizer) sanitizer_table(h, s);
  if (any_artifacts) artifacts_table(h, s);
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

std::string light_note(const RunSummary& s, bool any_light, bool any_gbps) {
  if (!any_light && any_gbps)
    return "<b>The speed of light was not measured in this run</b> (rounds.jsonl holds no "
           "device-to-device copy records): the bandwidth in GB/s (bytes moved per call over the "
           "median time) is shown instead.";
  if (!any_light)
    return "No bandwidth: the spec gives no bytes moved per element, or nothing was timed; the "
           "speed of light was not measured.";
  std::string note =
      "Each arm's bandwidth (bytes moved per call over its median time) as a percentage of the "
      "speed of light: the bandwidth of a device-to-device copy measured in the same run. Speed "
      "of light:";
  // A timing point's name (format 2) where the row has one, else its element count.
  auto where = [&](std::int64_t size) {
    for (const TimingRow& row : s.timing)
      if (row.size == size && row.point) return esc(*row.point);
    return size_html(size);
  };
  for (const LightRow& l : s.light.per_size)
    note += " " + where(l.size) + ": " + num(l.gbps, "%.1f") + " GB/s (median of " +
            std::to_string(l.n) + " copies);";
  note.back() = '.';
  std::vector<std::string> missing;
  for (const TimingRow& row : s.timing)
    if (!row.light_gbps) missing.push_back(where(row.size));
  if (!missing.empty()) note += " No light was measured at " + joined(missing) + ".";
  return note;
}

void plots(std::ostringstream& h, const RunSummary& s, bool any_round) {
  bool any_time = false, any_gbps = false, any_light = false, any_speedup = false;
  for (const TimingRow& row : s.timing)
    for (const TimingCell& a : row.arms) {
      any_time |= a.median_s > 0;
      any_gbps |= a.gbps.has_value();
      any_light |= a.pct_light.has_value();
      any_speedup |= a.speedup.has_value();
    }
  const std::string baseline = esc(s.decision.baseline);
  // Format 2: timed at points, placed by the bytes a call moves.
  const bool points = std::any_of(s.timing.begin(), s.timing.end(),
                                  [](const TimingRow& row) { return row.point.has_value(); });

  plot_section(h, "time",
               points ? "Time per call against the bytes it moves, at each point (log-log)"
                      : "Time per call against size (log-log)",
               any_time ? "Median time per call of single launches, per arm (solid line, points); "
                          "the fastest round (min) as a faint dashed line of the same colour. Both "
                          "axes are logarithmic."
                        : "No timing was recorded.",
               any_time);
  plot_section(
      h, "light",
      any_light ? "% of the speed of light per arm and size" : "Bandwidth per arm and size (GB/s)",
      light_note(s, any_light, any_gbps), any_light || any_gbps);
  plot_section(h, "rounds", "Every round, per arm and size",
               any_round
                   ? "Every timed round of rounds.jsonl, one panel per mode and size (and per "
                     "device, where CPU and GPU arms were timed: their times differ by "
                     "orders of magnitude): each point is one round, spread vertically "
                     "within its arm's row so that equal times stay visible; the black mark "
                     "is the median. Rounds taken while the GPU was throttled, or whose "
                     "enqueue outlasted the blocking kernel's hold, are red crosses, left out "
                     "of the statistics."
                   : "No rounds were recorded.",
               any_round);
  plot_section(
      h, "speedup", "Speed-up against the baseline (" + baseline + ")",
      any_speedup
          ? "The baseline's median over the arm's median at each size: the bar spans the 95% "
            "bootstrap interval, the thick tick is the estimate. A win counts when the whole bar "
            "is above 1 and the estimate reaches " +
                num(s.decision.min_speedup) + "&times; (the dashed line)."
          : "No speed-up: the baseline " + baseline +
                " was not timed beside another arm in this run.",
      any_speedup);
}

// What one call of each arm launched, from CUPTI; copies or sets inside a call are flagged.
void profile_table(std::ostringstream& h, const TimingRow& row) {
  h << "<p>What one call launches (CUPTI):</p>\n<table>\n<tr><th>arm</th><th>kernels</th>"
       "<th>kernel time</th><th>copies / sets in the call</th><th>first kernel</th>"
       "<th>grid &times; block</th><th>registers</th><th>occupancy</th></tr>\n";
  for (const TimingCell& a : row.arms) {
    if (!a.profile) continue;
    const KernelProfile& p = *a.profile;
    h << "<tr><td>" << esc(a.arm) << "</td>";
    if (p.unavailable) {
      h << "<td colspan=\"7\">" << esc(p.unavailable) << "</td></tr>\n";
      continue;
    }
    const bool stray = p.memcpys + p.memsets > 0;
    h << "<td class=\"n\">" << p.kernels << "</td><td class=\"n\">"
      << format_duration(p.kernel_seconds, Markup::html) << "</td><td class=\"n"
      << (stray ? " bad" : "") << "\">" << p.memcpys << " / " << p.memsets
      << (stray ? " (should be none)" : "") << "</td>";
    if (!p.first) {
      h << "<td></td><td></td><td></td><td></td></tr>\n";
      continue;
    }
    h << "<td>" << esc(p.first->name.substr(0, 60)) << "</td><td class=\"n\">" << p.first->grid
      << " &times; " << p.first->block << "</td><td class=\"n\">" << p.first->registers
      << "</td><td class=\"n\">" << num(100 * p.first->occupancy, "%.0f%%") << "</td></tr>\n";
  }
  h << "</table>\n";
}

// A size's per-arm table: the columns of report/columns.hpp that its cells carry.
void timing_table(std::ostringstream& h, const std::vector<TimingCell>& cells) {
  const std::vector<const Column*> shown = shown_columns(cells);
  h << "<table>\n<tr>";
  for (const Column* c : shown) h << "<th>" << esc(std::string(c->title)) << "</th>";
  h << "</tr>\n";
  for (const TimingCell& r : cells) {
    h << "<tr>";
    for (const Column* c : shown) {
      const Cell cell = format_cell(*c, r, Markup::html);
      const std::string t = esc(cell.text);
      h << (cell.numeric ? "<td class=\"n\">" : "<td>")
        << (cell.bad ? "<span class=\"bad\">" + t + "</span>" : t) << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</table>\n";
}

void size_section(std::ostringstream& h, const TimingRow& row) {
  h << "<h3 id=\"size-" << row.size << "\">"
    << (row.point ? esc(*row.point) : size_html(row.size) + " elements");
  if (row.bytes > 0) h << " (" << format_bytes(row.bytes) << " moved per call";
  if (row.flops) h << ", " << num(*row.flops / 1e9, "%.3g") << " GFLOP";
  if (row.bytes > 0) h << ")";
  h << "</h3>\n<p>rounds: " << row.rounds.value_or(0) << ", stopped by: " << esc(row.stopped_by);
  if (row.light_gbps)
    h << ", speed of light (device-to-device copy): " << num(*row.light_gbps, "%.1f") << " GB/s";
  if (row.floor_s)
    h << ", launch floor (an empty kernel, same run): "
      << format_duration(*row.floor_s, Markup::html);
  if (row.host_light_gbps)
    h << ", host copy beside the CPU arms: " << num(*row.host_light_gbps, "%.1f") << " GB/s";
  h << esc(compute_light_text(row)) << "</p>\n";
  if (!row.notes.empty()) {
    h << "<ul>\n";
    for (const std::string& note : row.notes) h << "<li>" << esc(note) << "</li>\n";
    h << "</ul>\n";
  }
  timing_table(h, row.arms);
  for (const TimingCell& a : row.arms)
    if (a.profile) return profile_table(h, row);
}

void timing_tables(std::ostringstream& h, const RunSummary& s) {
  if (!s.workers.empty()) {
    h << "<p>Arms from outside kq's install and known-broken candidates were timed in workers of "
         "their own, beside the references (named <code>arm@worker</code> there) and the "
         "controls:</p>\n<ul>\n";
    for (const std::string& line : worker_lines(s)) h << "<li>" << esc(line) << "</li>\n";
    h << "</ul>\n";
  }
  for (const TimingRow& row : s.timing) size_section(h, row);
  if (s.timing_skips.empty()) return;
  h << "<ul>\n";
  for (const auto& k : s.timing_skips)
    h << "<li>" << esc(k.arm) << " not timed at " << esc(s.where(k.size)) << ": " << esc(k.reason)
      << "</li>\n";
  h << "</ul>\n";
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

class HtmlPrinter : public Printer {
 public:
  std::string file_name() const override { return "report.html"; }
  std::string print(const RunSummary& s, const RunData& run) const override {
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>kq "
         "run: "
      << esc(s.op) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
    header(h, s);
    h << "<h2>Decision</h2>\n<p class=\"decision\">" << esc(s.decision.sentence) << "</p>\n";
    qualification(h, s);
    h << "<h2>Timing</h2>\n";
    if (!s.timing_ran)
      h << "<p>No timing was recorded (no qualified arm, or the run stopped before timing).</p>\n";
    plots(h, s, !run.rounds.empty());
    h << "<h2>Timing per size</h2>\n";
    timing_tables(h, s);
    h << "<footer>Written by kq " << esc(s.kq.version)
      << " from the run directory's summary.json and rounds.jsonl (both inline in this page, as "
         "JSON). Plots drawn by <a href=\"https://www.chartjs.org\">Chart.js</a> <span "
         "id=\"chartjs-version\"></span> (MIT licence), embedded in this file: the page needs no "
         "network.</footer>\n";
    h << "<script type=\"application/json\" id=\"kq-summary\">" << script_json(json(s))
      << "</script>\n";
    h << "<script type=\"application/json\" id=\"kq-rounds\">" << script_json(plotted_samples(run))
      << "</script>\n";
    h << "<script>\n" << script_text(chartjs_source()) << "\n</script>\n";
    h << "<script>\n" << script_text(report_html_script()) << "\n</script>\n";
    h << "</body>\n</html>\n";
    return h.str();
  }
};

}  // namespace

std::unique_ptr<Printer> html_printer() { return std::make_unique<HtmlPrinter>(); }

}  // namespace kq
