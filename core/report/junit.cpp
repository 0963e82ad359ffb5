#include "report/junit.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "qualify/expectation.hpp"
#include "util/markup.hpp"

namespace kq {

std::string render_junit(const nlohmann::json& summary, const RunData& run) {
  using nlohmann::json;
  std::map<std::string, std::vector<const rec::CaseResult*>> cases;
  for (const auto& c : run.cases) cases[c.arm].push_back(&c);

  std::ostringstream body;
  int tests = 0, failures = 0, skipped = 0;
  for (const auto& a : summary.value("arms", json::array())) {
    const std::string name = a.value("name", ""), v = a.value("verdict", "not run");
    const bool broken = known_broken(a.value("family", ""), a.value("expected_rejection", ""));
    const rec::Verdict verdict = rec::parse_verdict(v);
    std::ostringstream tc;
    int t = 1, f = 0, sk = 0;
    // The verdict as a test: what this arm should have got.
    tc << "    <testcase classname=\"" << escape_markup(name) << "\" name=\"verdict\">";
    if (rec::not_judged(verdict)) {
      tc << "<skipped message=\"" << escape_markup(v + ": " + a.value("detail", "")) << "\"/>";
      ++sk;
    } else if (broken) {
      const std::string want = a.value("expected_rejection", "");
      if (!caught_as_declared(v, a.value("check", ""), want)) {
        tc << "<failure type=\"not_caught\" message=\""
           << escape_markup("known-broken candidate got " + v + " (check " + a.value("check", "") +
                            "), expected rejection by " + want)
           << "\"/>";
        ++f;
      }
    } else if (verdict != rec::Verdict::qualified) {
      tc << "<failure type=\"" << escape_markup(a.value("check", v)) << "\" message=\""
         << escape_markup(v + ": " + a.value("detail", "")) << "\"/>";
      ++f;
    }
    tc << "</testcase>\n";
    if (!broken) {
      for (const rec::CaseResult* c : cases[name]) {
        ++t;
        tc << "    <testcase classname=\"" << escape_markup(name) << "\" name=\""
           << escape_markup(c->case_name) << "\" time=\"" << c->seconds << "\">";
        const std::string& res = c->result;
        if (res == "failed") {
          tc << "<failure type=\"" << escape_markup(c->check.value_or("")) << "\" message=\""
             << escape_markup(c->message.value_or("")) << "\"/>";
          ++f;
        } else if (res == "skipped") {
          tc << "<skipped message=\"" << escape_markup(c->message.value_or("")) << "\"/>";
          ++sk;
        }
        tc << "</testcase>\n";
      }
    }
    tests += t;
    failures += f;
    skipped += sk;
    body << "  <testsuite name=\"" << escape_markup(name) << "\" tests=\"" << t << "\" failures=\""
         << f << "\" errors=\"0\" skipped=\"" << sk << "\">\n"
         << "    <properties><property name=\"family\" value=\""
         << escape_markup(a.value("family", "")) << "\"/><property name=\"verdict\" value=\""
         << escape_markup(v) << "\"/></properties>\n"
         << tc.str() << "  </testsuite>\n";
  }
  std::ostringstream doc;
  doc << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kq "
      << escape_markup(summary.value("op", "")) << "\" tests=\"" << tests << "\" failures=\""
      << failures << "\" errors=\"0\" skipped=\"" << skipped << "\">\n"
      << body.str() << "</testsuites>\n";
  return doc.str();
}

}  // namespace kq
