#include <cstdio>
#include <map>
#include <sstream>

#include "report/columns.hpp"
#include "report/junit.hpp"
#include "report/report.hpp"
#include "report/report_html.hpp"
#include "report/rounds_csv.hpp"
#include "report/summary.hpp"
#include "util/json_lines.hpp"

namespace kq {

namespace {

std::string num(double x, const char* f = "%.2f") {
  char b[32];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

std::string cell(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  const auto& v = j[key];
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  for (auto& c : s)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return s;
}

// A list of arms grouped by reason (summary's "declined" or "skipped"), under its title.
void by_reason(std::ostringstream& md, const nlohmann::json& s, const std::string& key,
               const std::string& title) {
  const auto groups = s.value(key, nlohmann::json::array());
  if (groups.empty()) return;
  md << "\n" << title << ":\n\n";
  for (const auto& d : groups) {
    md << "- ";
    for (std::size_t i = 0; i < d["arms"].size(); ++i)
      md << (i ? ", " : "") << d["arms"][i].get<std::string>();
    md << ": " << cell(d, "reason") << "\n";
  }
}

// A size's per-arm table: the columns of report/columns.hpp that its rows carry.
void timing_table(std::ostringstream& md, const nlohmann::json& rows) {
  std::vector<const Column*> shown;
  for (const Column& c : timing_columns())
    if (column_shown(c, rows)) shown.push_back(&c);
  std::string head = "|", rule = "|";
  for (const Column* c : shown) {
    head += std::string(" ") + c->title + " |";
    rule += c->hint == Hint::text || c->hint == Hint::check ? "---|" : "---:|";
  }
  md << head << "\n" << rule << "\n";
  for (const auto& r : rows) {
    md << "|";
    for (const Column* c : shown) {
      std::string t = format_cell(*c, r, Markup::markdown).text;
      for (auto& ch : t)
        if (ch == '|' || ch == '\n') ch = ch == '|' ? '/' : ' ';
      md << " " << t << " |";
    }
    md << "\n";
  }
}

}  // namespace

std::string element_types(const nlohmann::json& s) {
  const std::string dtype = s.value("dtype", ""), compute = s.value("compute", dtype);
  if (dtype.empty()) return "";
  return " (" + dtype + (compute == dtype ? "" : ", computed in " + compute) + ")";
}

std::string render_markdown(const nlohmann::json& s) {
  std::ostringstream md;
  const auto& kq = s["kq"];
  md << "# kq run: " << s.value("op", "") << element_types(s) << "\n\n";
  md << "- started: " << s.value("started", "") << "\n";
  md << "- kq " << kq.value("version", "") << ", commit " << kq.value("commit", "")
     << (kq.value("dirty", false) ? " (dirty)" : "") << "\n";
  md << "- spec sha256: `" << s.value("spec_sha256", "") << "`\n";
  const auto& m = s["machine"];
  md << "- machine: " << m.value("hostname", "") << ", " << m.value("cpu", "") << ", "
     << m.value("cores", 0) << " cores";
  if (m.contains("gpus") && !m["gpus"].empty())
    for (const auto& g : m["gpus"])
      md << "; " << g.value("name", "") << " (" << g.value("sms", 0) << " SMs)";
  else
    md << "; no usable GPU (" << m.value("cuda_unusable", "") << ")";
  md << "\n";
  // What each plugin said of its environment (kq_plugin_environment): Python, torch, Triton.
  const nlohmann::json environment = s.value("plugin_environment", nlohmann::json::object());
  for (const auto& [plugin, facts] : environment.items()) {
    md << "- plugin " << plugin << ":";
    std::string sep = " ";
    for (const auto& [key, value] : facts.items()) {
      md << sep << key << " " << (value.is_string() ? value.get<std::string>() : value.dump());
      sep = ", ";
    }
    md << "\n";
  }
  md << "\n";

  const auto& h = s["headline"];
  md << "## Qualification\n\n";
  md << "**" << h.value("in_contract_cases_passed", 0) << " of " << h.value("in_contract_cases", 0)
     << "** in-contract cases passed" << skipped_note(h) << ", **"
     << h.value("out_of_contract_refused", 0) << " of " << h.value("out_of_contract_cases", 0)
     << "** out-of-contract inputs refused (good arms); **" << h.value("good_qualified", 0)
     << " of " << h.value("good_total", 0) << "** good arms qualified; **"
     << h.value("broken_rejected", 0) << " of " << h.value("broken_total", 0)
     << "** broken candidates rejected by their declared check.\n\n";
  md << "| arm | family | device | verdict | passed | refused | failed | skipped | check | case | "
        "detail |\n";
  md << "|---|---|---|---|---:|---:|---:|---:|---|---|---|\n";
  for (const auto& a : s["arms"]) {
    const std::string v = a.value("verdict", "");
    if (v == "unsupported" || v == "skipped") continue;  // listed once below, by reason
    const auto c = a.value("counts", nlohmann::json::object());
    md << "| " << cell(a, "name") << " | " << cell(a, "family") << " | " << cell(a, "device")
       << " | " << cell(a, "verdict");
    if (a.contains("caught") && !a["caught"].is_null())
      md << (a["caught"].get<bool>() ? " (as expected)"
                                     : " (NOT caught by " + cell(a, "expected_rejection") + ")");
    md << " | " << c.value("passed", 0) << " | " << c.value("refused", 0) << " | "
       << c.value("failed", 0) << " | " << c.value("skipped", 0) << " | " << cell(a, "check")
       << " | " << cell(a, "case") << " | " << cell(a, "detail") << " |\n";
  }
  by_reason(md, s, "declined", "Not offered for this spec (unsupported)");
  by_reason(md, s, "skipped", "Skipped on this machine");
  if (const auto errors = s.value("load_errors", nlohmann::json::array()); !errors.empty()) {
    md << "\nDid not load:\n\n";
    for (const auto& e : errors)
      md << "- " << cell(e, "file") << ": " << cell(e, "message") << "\n";
  }

  bool any_sanitizer = false, any_artifacts = false;
  for (const auto& a : s["arms"]) {
    any_sanitizer |= a.contains("sanitizer");
    any_artifacts |= a.contains("artifacts");
  }
  if (any_sanitizer) {
    md << "\n### compute-sanitizer\n\n| arm | tool | errors | first error | log "
          "|\n|---|---|---:|---|---|\n";
    for (const auto& a : s["arms"])
      for (const auto& f : a.value("sanitizer", nlohmann::json::array()))
        md << "| " << cell(a, "name") << " | " << cell(f, "tool") << " | " << f.value("errors", -1L)
           << " | " << cell(f, "first") << " | logs/" << cell(f, "log") << " |\n";
  }
  if (any_artifacts) {
    md << "\n### Artifacts\n\n| arm | files in artifacts/&lt;arm&gt;/ | SASS |\n|---|---|---|\n";
    for (const auto& a : s["arms"]) {
      if (!a.contains("artifacts")) continue;
      std::string files;
      for (const auto& f : a["artifacts"]["files"])
        files += (files.empty() ? "" : ", ") + f.get<std::string>();
      md << "| " << cell(a, "name") << " | " << files << " | " << a["artifacts"].value("sass", "")
         << " |\n";
    }
  }

  for (const auto& a : s["arms"])
    if (a.contains("choice"))
      md << "\n### What " << cell(a, "name") << " chose\n\n"
         << a["choice"].get<std::string>() << "\n";

  md << "\n## Timing\n\n";
  if (!s.value("timing_ran", false)) {
    md << "No timing was recorded (no qualified arm, or the run stopped before timing).\n";
  }
  if (const std::string eager = s.value("eager_choice", nlohmann::json::object()).value("used", "");
      !eager.empty())
    md << "Speed-ups side by side: against eager execution (" << eager
       << ") and against the compiled baseline (" << s["decision"].value("baseline", "")
       << "), each its median over the arm's, with a 95% bootstrap interval.\n\n";
  for (const auto& row : s["timing"]) {
    md << "### " << row.value("size", 0LL) << " elements";
    if (row.value("bytes", 0.0) > 0)
      md << " (" << num(row.value("bytes", 0.0) / 1e6, "%.3g") << " MB moved per call)";
    md << "\n\nrounds: " << row.value("rounds", 0)
       << ", stopped by: " << row.value("stopped_by", "");
    if (row.contains("light_gbps"))
      md << ", speed of light (device-to-device copy, same run): "
         << num(row["light_gbps"].get<double>(), "%.1f") << " GB/s";
    if (row.contains("floor_s"))
      md << ", launch floor (an empty kernel, same run): "
         << format_duration(row["floor_s"].get<double>(), Markup::markdown);
    if (row.contains("host_light_gbps"))
      md << ", host copy beside the CPU arms: " << num(row["host_light_gbps"].get<double>(), "%.1f")
         << " GB/s";
    md << "\n\n";
    for (const auto& note : row.value("notes", nlohmann::json::array()))
      md << "- " << note.get<std::string>() << "\n";
    timing_table(md, row["arms"]);
    md << "\n";
    // What each call launched, from one extra call under CUPTI.
    bool any_profile = false;
    for (const auto& a : row["arms"]) any_profile |= a.contains("profile");
    if (any_profile) {
      md << "What one call launches (CUPTI):\n\n| arm | kernels | kernel time | copies/sets in the "
            "call | "
            "first kernel | grid x block | registers | occupancy "
            "|\n|---|---:|---:|---:|---|---|---:|---:|\n";
      for (const auto& a : row["arms"]) {
        if (!a.contains("profile")) continue;
        const auto& p = a["profile"];
        md << "| " << cell(a, "arm") << " | ";
        if (p.contains("unavailable")) {
          md << cell(p, "unavailable") << " | | | | | | |\n";
          continue;
        }
        md << p.value("kernels", 0) << " | " << format_seconds(p.value("kernel_seconds", 0.0))
           << " | " << p.value("memcpys", 0) << " / " << p.value("memsets", 0)
           << (p.value("memcpys", 0) + p.value("memsets", 0) > 0 ? " **(should be none)**" : "")
           << " | ";
        if (!p["list"].empty()) {
          const auto& k = p["list"][0];
          md << cell(k, "name").substr(0, 60) << " | " << k["grid"][0].get<int>() << " x "
             << k["block"][0].get<int>() << " | " << k.value("registers", 0) << " | "
             << num(100 * k.value("occupancy", 0.0), "%.0f%%") << " |\n";
        } else {
          md << " | | | |\n";
        }
      }
      md << "\n";
    }
  }
  for (const auto& k : s["timing_skips"])
    md << "- " << cell(k, "arm") << " not timed at " << k.value("size", 0LL) << ": "
       << cell(k, "reason") << "\n";

  md << "\n## Decision\n\n" << s["decision"].value("sentence", "") << "\n";
  return md.str();
}

nlohmann::json write_report(const std::filesystem::path& run_dir) {
  const RunData run = read_run(run_dir);
  nlohmann::json s = summarize(run);
  write_file_atomic(run_dir / "summary.json", s.dump(2) + "\n");
  write_file_atomic(run_dir / "report.md", render_markdown(s));
  write_file_atomic(run_dir / "report.html", render_html(s, run));
  write_file_atomic(run_dir / "rounds.csv", render_rounds_csv(run));
  write_file_atomic(run_dir / "junit.xml", render_junit(s, run));
  return s;
}

}  // namespace kq
