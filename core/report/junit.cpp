#include "report/junit.hpp"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "qualify/expectation.hpp"
#include "util/json_lines.hpp"
#include "util/markup.hpp"

namespace kq {
namespace {

struct Suite {
  nlohmann::json identity;
  std::vector<nlohmann::json> cases;
  nlohmann::json verdict = nlohmann::json::object();  // empty: the run stopped before it
};

}  // namespace

std::string render_junit(const std::filesystem::path& dir) {
  using nlohmann::json;
  json manifest = json::object();
  if (std::ifstream in(dir / "manifest.json"); in) manifest = json::parse(in, nullptr, false);
  std::map<std::string, Suite> suites;
  std::vector<std::string> order;
  for (const auto& a : manifest.value("arms", json::array())) {
    order.push_back(a.value("name", ""));
    suites[order.back()].identity = a;
  }
  for (const auto& r : read_json_lines(dir / "qualification.jsonl")) {
    auto it = suites.find(r.value("arm", ""));
    if (it == suites.end() || r.contains("pass")) continue;
    if (r.value("type", "") == "case") it->second.cases.push_back(r);
    if (r.value("type", "") == "verdict") it->second.verdict = r;
  }
  // An arm the timing checks rejected after it qualified: that rejection is its verdict.
  for (const auto& r : read_json_lines(dir / "rounds.jsonl")) {
    if (r.value("type", "") != "timing_reject") continue;
    auto it = suites.find(r.value("arm", ""));
    if (it == suites.end() || it->second.verdict.value("verdict", "") != "qualified") continue;
    it->second.verdict["verdict"] = "rejected";
    it->second.verdict["check"] = r.value("check", "");
    it->second.verdict["detail"] = r.value("message", "");
  }

  std::ostringstream body;
  int tests = 0, failures = 0, skipped = 0;
  for (const auto& name : order) {
    const Suite& s = suites[name];
    const bool broken =
        known_broken(s.identity.value("family", ""), s.identity.value("expected_rejection", ""));
    const std::string v = s.verdict.value("verdict", "not run");
    std::ostringstream tc;
    int t = 1, f = 0, sk = 0;
    // The verdict as a test: what this arm should have got.
    tc << "    <testcase classname=\"" << escape_markup(name) << "\" name=\"verdict\">";
    if (v == "skipped" || v == "unsupported" || v == "not run") {
      tc << "<skipped message=\"" << escape_markup(v + ": " + s.verdict.value("detail", ""))
         << "\"/>";
      ++sk;
    } else if (broken) {
      const std::string want = s.identity.value("expected_rejection", "");
      if (!caught_as_declared(v, s.verdict.value("check", ""), want)) {
        tc << "<failure type=\"not_caught\" message=\""
           << escape_markup("known-broken candidate got " + v + " (check " +
                            s.verdict.value("check", "") + "), expected rejection by " + want)
           << "\"/>";
        ++f;
      }
    } else if (v != "qualified") {
      tc << "<failure type=\"" << escape_markup(s.verdict.value("check", v)) << "\" message=\""
         << escape_markup(v + ": " + s.verdict.value("detail", "")) << "\"/>";
      ++f;
    }
    tc << "</testcase>\n";
    if (!broken) {
      for (const auto& c : s.cases) {
        ++t;
        tc << "    <testcase classname=\"" << escape_markup(name) << "\" name=\""
           << escape_markup(c.value("case", "")) << "\" time=\"" << c.value("seconds", 0.0)
           << "\">";
        const std::string res = c.value("result", "");
        if (res == "failed") {
          tc << "<failure type=\"" << escape_markup(c.value("check", "")) << "\" message=\""
             << escape_markup(c.value("message", "")) << "\"/>";
          ++f;
        } else if (res == "skipped") {
          tc << "<skipped message=\"" << escape_markup(c.value("message", "")) << "\"/>";
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
         << escape_markup(s.identity.value("family", ""))
         << "\"/><property name=\"verdict\" value=\"" << escape_markup(v) << "\"/></properties>\n"
         << tc.str() << "  </testsuite>\n";
  }
  std::ostringstream doc;
  doc << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kq "
      << escape_markup(manifest.value("op", "")) << "\" tests=\"" << tests << "\" failures=\""
      << failures << "\" errors=\"0\" skipped=\"" << skipped << "\">\n"
      << body.str() << "</testsuites>\n";
  return doc.str();
}

}  // namespace kq
