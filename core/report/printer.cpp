#include "report/printer.hpp"

#include "summary/summarize.hpp"
#include "util/json_lines.hpp"

namespace kq {

std::vector<std::unique_ptr<Printer>> file_printers() {
  std::vector<std::unique_ptr<Printer>> out;
  out.push_back(markdown_printer());
  out.push_back(html_printer());
  out.push_back(rounds_csv_printer());
  out.push_back(junit_printer());
  return out;
}

Report write_report(const std::filesystem::path& run_dir) {
  Report r{{}, read_run(run_dir)};
  r.summary = summarize(r.run);
  write_file_atomic(run_dir / "summary.json", nlohmann::json(r.summary).dump(2) + "\n");
  for (const auto& p : file_printers())
    write_file_atomic(run_dir / p->file_name(), p->print(r.summary, r.run));
  return r;
}

std::string element_types(const RunSummary& s) {
  const std::string dtype = s.dtype.value_or(""), compute = s.compute.value_or(dtype);
  if (dtype.empty()) return "";
  return " (" + dtype + (compute == dtype ? "" : ", computed in " + compute) + ")";
}

}  // namespace kq
