// The reports of a run: each output is a Printer of the same typed inputs, the run's summary
// (summary/run_summary.hpp) and its records (record/run_data.hpp), in a file of its own:
//   report.md   markdown.cpp     the tables and the decision
//   report.html html.cpp         the same, with plots (Chart.js inline; no network)
//   junit.xml   junit.cpp        a test per arm verdict and per case
//   rounds.csv  rounds_csv.cpp   every timed sample
//   (stdout)    console.cpp      the closing lines of kq run and kq report
// write_report() summarises a run directory, writes summary.json and loops over the file
// printers. A new output is a new Printer; a new summary field is printed where it belongs.
//
// May include: summary/, record/, decision/ (types), qualify/expectation.hpp, util/. Nothing
// after it reads its output but people and CI.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "record/run_data.hpp"
#include "summary/run_summary.hpp"

namespace kq {

class Printer {
 public:
  virtual ~Printer() = default;
  // The file it writes in the run directory ("" for the console).
  virtual std::string file_name() const = 0;
  virtual std::string print(const RunSummary& summary, const RunData& run) const = 0;
};

std::unique_ptr<Printer> markdown_printer();
// Once the page's script has drawn every plot it appends <div id="kq-plots-ready"
// data-count="N" data-charts="M" hidden> (N plots, M Chart.js charts); when a plot fails it
// shows #kq-plots-error instead.
std::unique_ptr<Printer> html_printer();
std::unique_ptr<Printer> junit_printer();
std::unique_ptr<Printer> rounds_csv_printer();
// The closing lines: the headline, the decision (unless `with_decision` is false: a
// qualification alone decides nothing) and where the reports are.
std::unique_ptr<Printer> console_printer(bool with_decision = true);

// The printers whose output is a file, in the order they are written.
std::vector<std::unique_ptr<Printer>> file_printers();

// Summarises the run directory and writes summary.json and every file printer's file; returns
// the summary and the records it was made from.
struct Report {
  RunSummary summary;
  RunData run;
};
Report write_report(const std::filesystem::path& run_dir);

// " (bf16, computed in f32)", " (f32)", or "" for runs that did not record their dtype: what
// the reports' titles add to the op's name.
std::string element_types(const RunSummary& summary);

}  // namespace kq
