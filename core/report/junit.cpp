// junit.xml: one test suite per arm; its verdict is a test (what this arm should have got), and
// each of a good arm's cases is one.
#include <map>
#include <sstream>

#include "qualify/expectation.hpp"
#include "report/printer.hpp"
#include "util/markup.hpp"

namespace kq {
namespace {

struct SuiteCounts {
  int tests = 0, failures = 0, skipped = 0;
};

std::string esc(const std::string& s) { return escape_markup(s); }

// The verdict as a test: skipped when never judged, failed when it is not what the arm should
// have got.
std::string verdict_case(const ArmRow& a, SuiteCounts& n) {
  const std::string v(rec::to_string(a.verdict));
  const std::string check = a.check.value_or(""), detail = a.detail.value_or("");
  std::ostringstream tc;
  tc << "    <testcase classname=\"" << esc(a.name) << "\" name=\"verdict\">";
  ++n.tests;
  if (rec::not_judged(a.verdict)) {
    tc << "<skipped message=\"" << esc(v + ": " + detail) << "\"/>";
    ++n.skipped;
  } else if (known_broken(a.family, a.expected_rejection)) {
    if (!caught_as_declared(v, check, a.expected_rejection)) {
      tc << "<failure type=\"not_caught\" message=\""
         << esc("known-broken candidate got " + v + " (check " + check +
                "), expected rejection by " + a.expected_rejection)
         << "\"/>";
      ++n.failures;
    }
  } else if (a.verdict != rec::Verdict::qualified) {
    tc << "<failure type=\"" << esc(a.check.value_or(v)) << "\" message=\""
       << esc(v + ": " + detail) << "\"/>";
    ++n.failures;
  }
  tc << "</testcase>\n";
  return tc.str();
}

std::string case_test(const ArmRow& a, const rec::CaseResult& c, SuiteCounts& n) {
  std::ostringstream tc;
  ++n.tests;
  tc << "    <testcase classname=\"" << esc(a.name) << "\" name=\"" << esc(c.case_name)
     << "\" time=\"" << c.seconds << "\">";
  if (c.result == "failed") {
    tc << "<failure type=\"" << esc(c.check.value_or("")) << "\" message=\""
       << esc(c.message.value_or("")) << "\"/>";
    ++n.failures;
  } else if (c.result == "skipped") {
    tc << "<skipped message=\"" << esc(c.message.value_or("")) << "\"/>";
    ++n.skipped;
  }
  tc << "</testcase>\n";
  return tc.str();
}

class JunitPrinter : public Printer {
 public:
  std::string file_name() const override { return "junit.xml"; }
  std::string print(const RunSummary& s, const RunData& run) const override {
    std::map<std::string, std::vector<const rec::CaseResult*>> cases;
    for (const auto& c : run.cases) cases[c.arm].push_back(&c);
    std::ostringstream body;
    SuiteCounts all;
    for (const ArmRow& a : s.arms) {
      SuiteCounts n;
      std::string tests = verdict_case(a, n);
      if (!known_broken(a.family, a.expected_rejection))
        for (const rec::CaseResult* c : cases[a.name]) tests += case_test(a, *c, n);
      all.tests += n.tests;
      all.failures += n.failures;
      all.skipped += n.skipped;
      body << "  <testsuite name=\"" << esc(a.name) << "\" tests=\"" << n.tests << "\" failures=\""
           << n.failures << "\" errors=\"0\" skipped=\"" << n.skipped << "\">\n"
           << "    <properties><property name=\"family\" value=\"" << esc(a.family)
           << "\"/><property name=\"verdict\" value=\""
           << esc(std::string(rec::to_string(a.verdict))) << "\"/></properties>\n"
           << tests << "  </testsuite>\n";
    }
    std::ostringstream doc;
    doc << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kq " << esc(s.op)
        << "\" tests=\"" << all.tests << "\" failures=\"" << all.failures
        << "\" errors=\"0\" skipped=\"" << all.skipped << "\">\n"
        << body.str() << "</testsuites>\n";
    return doc.str();
  }
};

}  // namespace

std::unique_ptr<Printer> junit_printer() { return std::make_unique<JunitPrinter>(); }

}  // namespace kq
