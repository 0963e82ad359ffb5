// report.md: the run's facts, the verdicts, the timing per size and the decision, in markdown.
#include <cstdio>
#include <sstream>

#include "report/columns.hpp"
#include "report/printer.hpp"
#include "report/report_text.hpp"

namespace kq {
namespace {

std::string num(double x, const char* f) {
  char b[32];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// A table cell: no '|' or line break may end it early.
std::string cell(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return s;
}
std::string cell(const std::optional<std::string>& s) { return cell(s.value_or("")); }

void header(std::ostringstream& md, const RunSummary& s) {
  md << "# kq run: " << s.op << element_types(s) << "\n\n";
  md << "- started: " << s.started << "\n";
  md << "- kq " << s.kq.version << ", commit " << s.kq.commit << (s.kq.dirty ? " (dirty)" : "")
     << "\n";
  md << "- spec sha256: `" << s.spec_sha256 << "`\n";
  md << "- machine: " << machine_text(s.machine) << "\n";
  if (const std::string e = settings_text(s.machine); !e.empty())
    md << "- environment: " << cell(e) << "\n";
  if (const std::string g = gpu_load_text(s); !g.empty())
    md << "- qualification's cases by GPU: " << g << "\n";
  // What each plugin said of its environment (kq_plugin_environment): Python, torch, Triton.
  for (const std::string& line : environment_lines(s.plugin_environment))
    md << "- " << line << "\n";
  md << "\n";
}

// A list of arms grouped by reason (declined or skipped), under its title.
void by_reason(std::ostringstream& md, const std::vector<ReasonGroup>& groups,
               const std::string& title) {
  if (groups.empty()) return;
  md << "\n" << title << ":\n\n";
  for (const ReasonGroup& d : groups)
    md << "- " << joined(d.arms) << ": " << cell(d.reason) << "\n";
}

void verdict_table(std::ostringstream& md, const RunSummary& s) {
  md << "| arm | family | device | verdict | passed | refused | failed | skipped | check | case | "
        "detail |\n";
  md << "|---|---|---|---|---:|---:|---:|---:|---|---|---|\n";
  for (const ArmRow& a : s.arms) {
    if (a.verdict == rec::Verdict::unsupported || a.verdict == rec::Verdict::skipped)
      continue;  // listed once below, by reason
    const rec::CaseCounts c = a.counts.value_or(rec::CaseCounts{});
    md << "| " << cell(a.name) << " | " << cell(a.family) << " | " << cell(a.device) << " | "
       << rec::to_string(a.verdict);
    if (a.caught == Caught::yes) md << " (as expected)";
    if (a.caught == Caught::no) md << " (NOT caught by " << cell(a.expected_rejection) << ")";
    md << " | " << c.passed << " | " << c.refused << " | " << c.failed << " | " << c.skipped
       << " | " << cell(a.check) << " | " << cell(a.case_name) << " | " << cell(a.detail) << " |\n";
  }
}

void sanitizer_table(std::ostringstream& md, const RunSummary& s) {
  md << "\n### compute-sanitizer\n\n| arm | tool | errors | first error | log "
        "|\n|---|---|---:|---|---|\n";
  for (const ArmRow& a : s.arms)
    for (const auto& f : a.sanitizer)
      md << "| " << cell(a.name) << " | " << cell(f.tool) << " | " << f.errors << " | "
         << cell(f.first) << " | logs/" << cell(f.log) << " |\n";
}

// Each arm's artifacts: how many files, the key ones named (report.html folds the rest).
void artifacts_table(std::ostringstream& md, const RunSummary& s) {
  md << "\n### Artifacts\n\n| arm | files in artifacts/&lt;arm&gt;/ | SASS |\n|---|---|---|\n";
  for (const ArmRow& a : s.arms)
    if (a.artifacts)
      md << "| " << cell(a.name) << " | " << joined(a.artifacts->files) << " | "
         << a.artifacts->sass << " |\n";
}

void qualification(std::ostringstream& md, const RunSummary& s) {
  md << "## Qualification\n\n" << headline_text(s.headline, Markup::markdown) << "\n\n";
  verdict_table(md, s);
  by_reason(md, s.declined, "Not offered for this spec (unsupported)");
  by_reason(md, s.skipped, "Skipped on this machine");
  if (!s.load_errors.empty()) {
    md << "\nDid not load:\n\n";
    for (const LoadErrorRow& e : s.load_errors)
      md << "- " << cell(e.file) << ": " << cell(e.message) << "\n";
  }
  bool any_sanitizer = false, any_artifacts = false;
  for (const ArmRow& a : s.arms) {
    any_sanitizer |= !a.sanitizer.empty();
    any_artifacts |= a.artifacts.has_value();
  }
  if (any_sanitizer) sanitizer_table(md, s);
  if (any_artifacts) artifacts_table(md, s);
  for (const ArmRow& a : s.arms)
    if (a.choice) md << "\n### What " << cell(a.name) << " chose\n\n" << *a.choice << "\n";
}

// A size's per-arm table: the columns of report/columns.hpp that its cells carry.
void timing_table(std::ostringstream& md, const std::vector<TimingCell>& cells) {
  const std::vector<const Column*> shown = shown_columns(cells);
  std::string head = "|", rule = "|";
  for (const Column* c : shown) {
    head += std::string(" ") + c->title + " |";
    rule += c->hint == Hint::text || c->hint == Hint::check ? "---|" : "---:|";
  }
  md << head << "\n" << rule << "\n";
  for (const TimingCell& r : cells) {
    md << "|";
    for (const Column* c : shown)
      md << " " << cell(format_cell(*c, r, Markup::markdown).text) << " |";
    md << "\n";
  }
}

// What each call launched, from one extra call under CUPTI.
void profile_table(std::ostringstream& md, const TimingRow& row) {
  md << "What one call launches (CUPTI):\n\n| arm | kernels | kernel time | copies/sets in the "
        "call | first kernel | grid x block | registers | occupancy "
        "|\n|---|---:|---:|---:|---|---|---:|---:|\n";
  for (const TimingCell& a : row.arms) {
    if (!a.profile) continue;
    const KernelProfile& p = *a.profile;
    md << "| " << cell(a.arm) << " | ";
    if (p.unavailable) {
      md << cell(p.unavailable) << " | | | | | | |\n";
      continue;
    }
    md << p.kernels << " | " << format_seconds(p.kernel_seconds) << " | " << p.memcpys << " / "
       << p.memsets << (p.memcpys + p.memsets > 0 ? " **(should be none)**" : "") << " | ";
    if (p.first)
      md << cell(p.first->name).substr(0, 60) << " | " << p.first->grid << " x " << p.first->block
         << " | " << p.first->registers << " | " << num(100 * p.first->occupancy, "%.0f%%")
         << " |\n";
    else
      md << " | | | |\n";
  }
  md << "\n";
}

void size_section(std::ostringstream& md, const TimingRow& row) {
  md << "### " << (row.point ? *row.point : std::to_string(row.size) + " elements");
  if (row.bytes > 0) md << " (" << format_bytes(row.bytes) << " moved per call";
  if (row.flops) md << ", " << num(*row.flops / 1e9, "%.3g") << " GFLOP";
  if (row.bytes > 0) md << ")";
  md << "\n\nrounds: " << row.rounds.value_or(0) << ", stopped by: " << row.stopped_by;
  if (row.light_gbps)
    md << ", speed of light (device-to-device copy, same run): " << num(*row.light_gbps, "%.1f")
       << " GB/s";
  if (row.floor_s)
    md << ", launch floor (an empty kernel, same run): "
       << format_duration(*row.floor_s, Markup::markdown);
  if (row.host_light_gbps)
    md << ", host copy beside the CPU arms: " << num(*row.host_light_gbps, "%.1f") << " GB/s";
  md << compute_light_text(row) << "\n\n";
  for (const std::string& note : row.notes) md << "- " << note << "\n";
  timing_table(md, row.arms);
  md << "\n";
  for (const TimingCell& a : row.arms)
    if (a.profile) return profile_table(md, row);
}

void timing(std::ostringstream& md, const RunSummary& s) {
  md << "\n## Timing\n\n";
  if (!s.timing_ran)
    md << "No timing was recorded (no qualified arm, or the run stopped before timing).\n";
  if (const auto& e = s.decision.eager_choice; e && !e->used.empty())
    md << "Speed-ups side by side: against eager execution (" << e->used
       << ") and against the compiled baseline (" << s.decision.baseline
       << "), each its median over the arm's, with a 95% bootstrap interval.\n\n";
  if (!s.workers.empty()) {
    md << "Arms from outside kq's install and known-broken candidates were timed in workers of "
          "their own, beside the references and the controls (their speed-ups are against the "
          "references of their own worker; the references appear there as `arm@worker`):\n\n";
    for (const std::string& line : worker_lines(s)) md << "- " << cell(line) << "\n";
    md << "\n";
  }
  for (const TimingRow& row : s.timing) size_section(md, row);
  for (const auto& k : s.timing_skips)
    md << "- " << cell(k.arm) << " not timed at " << cell(s.where(k.size)) << ": " << cell(k.reason)
       << "\n";
}

class MarkdownPrinter : public Printer {
 public:
  std::string file_name() const override { return "report.md"; }
  std::string print(const RunSummary& s, const RunData&) const override {
    std::ostringstream md;
    header(md, s);
    qualification(md, s);
    timing(md, s);
    md << "\n## Decision\n\n" << s.decision.sentence << "\n";
    return md.str();
  }
};

}  // namespace

std::unique_ptr<Printer> markdown_printer() { return std::make_unique<MarkdownPrinter>(); }

}  // namespace kq
