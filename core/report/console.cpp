// The closing lines of `kq run`, `kq qualify` and `kq report`: the headline, the decision, and
// where the reports are.
#include "report/printer.hpp"
#include "report/report_text.hpp"
#include "summary/summarize.hpp"

namespace kq {
namespace {

class ConsolePrinter : public Printer {
 public:
  explicit ConsolePrinter(bool with_decision) : with_decision_(with_decision) {}
  std::string file_name() const override { return ""; }
  std::string print(const RunSummary& s, const RunData& run) const override {
    const Headline& h = s.headline;
    std::string out = "\n" + std::to_string(h.in_contract_cases_passed) + " of " +
                      std::to_string(h.in_contract_cases) + " in-contract cases passed" +
                      skipped_note(h) + ", " + std::to_string(h.out_of_contract_refused) + " of " +
                      std::to_string(h.out_of_contract_cases) + " out-of-contract inputs refused\n";
    if (with_decision_) {
      for (const std::string& line : worker_lines(s)) out += line + "\n";
      out += s.decision.sentence + "\n";
    }
    return out + "report: " + (run.dir / "report.md").string() + ", " +
           (run.dir / "report.html").string() + "\n";
  }

 private:
  bool with_decision_;
};

}  // namespace

std::unique_ptr<Printer> console_printer(bool with_decision) {
  return std::make_unique<ConsolePrinter>(with_decision);
}

}  // namespace kq
