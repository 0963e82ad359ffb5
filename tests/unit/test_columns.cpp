// The timing table's columns and their format hints (report/columns.hpp): each hint printed in
// both markups, and optional columns shown only where a row carries them.
#include <doctest/doctest.h>

#include <algorithm>

#include "report/columns.hpp"

namespace {

const kq::Column& column(const std::string& title) {
  for (const auto& c : kq::timing_columns())
    if (title == c.title) return c;
  FAIL("no column " << title);
  return kq::timing_columns().front();
}

std::string md(const std::string& title, const kq::TimingCell& row) {
  return kq::format_cell(column(title), row, kq::Markup::markdown).text;
}

}  // namespace

TEST_CASE("each hint formats its value, in markdown and in HTML") {
  // A cell as summary.json holds it.
  const kq::TimingCell row =
      nlohmann::json{
          {"arm", "a|b"},       {"n", 42},          {"median_s", 7.87e-6}, {"min_s", 7.5e-6},
          {"q1_s", 7.7e-6},     {"q3_s", 8.0e-6},   {"rel_noise", 0.0123}, {"gbps", 4404.26},
          {"pct_light", 97.54}, {"speedup", 1.052}, {"speedup_lo", 1.011}, {"speedup_hi", 1.093},
          {"recheck_ok", true}, {"checked", 17}}
          .get<kq::TimingCell>();
  CHECK(md("arm", row) == "a|b");  // escaping is the printer's
  CHECK(md("samples", row) == "42");
  CHECK(md("median", row) == "7.87 us");
  CHECK(kq::format_cell(column("median"), row, kq::Markup::html).text == "7.87 \u00b5s");
  CHECK(md("IQR", row) == "300 ns");
  CHECK(md("noise", row) == "1.2%");
  CHECK(md("GB/s", row) == "4404.3");
  CHECK(md("% of light", row) == "97.5%");
  CHECK(md("speed-up vs baseline (95% CI)", row) == "1.05x (1.01\u20131.09)");
  CHECK(kq::format_cell(column("speed-up vs baseline (95% CI)"), row, kq::Markup::html).text ==
        "1.05\u00d7 (1.01\u20131.09)");
  CHECK(md("loop output", row) == "ok (17 checked)");

  const auto wrong = nlohmann::json{{"recheck_ok", false}, {"recheck_message", "at 7: 1 != 2"}}
                         .get<kq::TimingCell>();
  const kq::Cell c = kq::format_cell(column("loop output"), wrong, kq::Markup::html);
  CHECK(c.text == "WRONG: at 7: 1 != 2");
  CHECK(c.bad);
  CHECK(md("GB/s", wrong).empty());  // a value the row lacks is an empty cell
}

TEST_CASE("optional columns are shown only when a row of the table carries them") {
  const auto rows = nlohmann::json{{{"arm", "a"}}, {{"arm", "b"}, {"host_median_s", 1e-5}}}
                        .get<std::vector<kq::TimingCell>>();
  const std::vector<const kq::Column*> shown = kq::shown_columns(rows);
  auto is_shown = [&](const std::string& title) {
    return std::find(shown.begin(), shown.end(), &column(title)) != shown.end();
  };
  CHECK(is_shown("host enqueue"));
  CHECK(!is_shown("graph replay per call"));
  CHECK(is_shown("median"));  // always
}

TEST_CASE("durations and sizes read as numbers a person would write") {
  CHECK(kq::format_seconds(12e-9) == "12 ns");
  CHECK(kq::format_seconds(4.1e-3) == "4.1 ms");
  CHECK(kq::format_seconds(59.8) == "59.8 s");
  CHECK(kq::format_seconds(2578.4) == "2578 s");  // a campaign's task time, not 2.58e+03 s
  CHECK(kq::format_bytes(268435456.0) == "268 MB");
  CHECK(kq::format_bytes(3.221225472e9) == "3.22 GB");
}
