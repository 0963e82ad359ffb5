// Derived dims (indexed/derived_dims.hpp): a dim computed from the others by an integer formula
// (a pooling's output length from its input's), never given at a point. The formula rounds down,
// refuses what it cannot compute, and names what is wrong; specs, --points and the planner all
// fill it in, so that every case's dims agree with it.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "indexed/derived_dims.hpp"
#include "kq/indexed_text.hpp"
#include "plan/choose_points.hpp"
#include "plan/plan_cases.hpp"
#include "spec/spec.hpp"

namespace fs = std::filesystem;
namespace ix = kq::ix;

namespace {

const fs::path kV2 = fs::path(KQ_SOURCE_DIR) / "tests/data/specs_v2";

// dims H and W, and O derived by `formula`.
ix::Declarations decls(const std::string& formula) {
  return ix::Declarations{{{"H", ix::DimKind::free, ""},
                           {"W", ix::DimKind::reduced, ""},
                           {"O", ix::DimKind::free, formula}},
                          {},
                          {}};
}

// O at H, W; or the reason it has none.
std::string derive(const std::string& formula, std::int64_t h, std::int64_t w) {
  std::vector<std::int64_t> dims = {h, w, 99};
  if (auto bad = ix::complete_dims(decls(formula), dims)) return *bad;
  return std::to_string(dims[2]);
}

std::string formula_error(const std::string& formula) {
  auto bad = ix::check_dim_formula(decls(formula), 2);
  return bad ? std::to_string(bad->column) + ": " + bad->message : "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The message choose_points throws for `text`, or "" when it accepts it.
std::string refusal(const kq::Spec& spec, const std::string& text) {
  try {
    kq::choose_points(spec, {text});
  } catch (const kq::PointsError& e) {
    return e.what();
  }
  return "";
}

std::string spec_error(const std::string& dims, const std::string& points) {
  const std::string text = "kq_spec: 2\nop: w\n" + dims +
                           "inputs: {x: {dtype: f32, shape: [M, N]}}\n"
                           "outputs: {y: {dtype: f32, shape: [M, NO]}}\n"
                           "semantics: |\n  y[m, j] = x[m, j + 0] + x[m, j + 2]\n"
                           "compare: {y: {ulp: 1}}\n"
                           "timing: {points: " +
                           points + "}\ndecision: {baseline: cpu_tbb}\n";
  try {
    kq::parse_spec(text, "w.yaml");
  } catch (const kq::SpecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a derived dim's formula: + - * and / rounding down, with parentheses") {
  CHECK(derive("(H + 2 * 1 - 4) / 1 + 1", 512, 1) == "511");  // KernelBench 42's pooled length
  CHECK(derive("(H - 11) / 11 + 1", 2048, 1) == "186");       // 45: a window of 11, stride 11
  CHECK(derive("H / W", 7, 2) == "3");
  CHECK(derive("-(H - 10) / 4 + W", 3, 1) == "2");  // -(-7) / 4 = 1, + 1
  CHECK(derive("(H - 10) / 4 + 3", 3, 1) == "1");   // floor(-7 / 4) = -2, not -1
  CHECK(derive("H*W-1", 3, 5) == "14");
}

TEST_CASE("a derived dim below 1, a division by 0 or int64 left: the reason, with the values") {
  const std::string zero = derive("(H - 11) / 11 + 1", 5, 1);
  CHECK(has(zero, "O = (H - 11) / 11 + 1 is 0 at H=5,W=1; every dim is at least 1"));
  CHECK(has(derive("H / (W - 1)", 5, 1), "divides by 0 at H=5,W=1"));
  CHECK(has(derive("H * H * H", std::int64_t{1} << 40, 1), "leaves int64"));
}

TEST_CASE("a formula's errors: the column and what is wrong") {
  CHECK(formula_error("(H - 1) / 2 + 1") == "");
  CHECK(has(formula_error("H + Q"), "5: unknown name 'Q'"));
  CHECK(has(formula_error("(H - 1"), "')' is missing"));
  CHECK(has(formula_error("H +"), "an operand is missing at the end"));
  CHECK(has(formula_error("H $ 2"), "3: unexpected '$'"));
  CHECK(has(formula_error("O + 1"), "'O' is derived too"));
  CHECK(has(formula_error("H 2"), "3: unexpected '2'"));
  CHECK(has(formula_error(std::string(100, '(') + "H" + std::string(100, ')')),
            "65: parentheses nested deeper than 64"));
  CHECK(has(formula_error(std::string(100, '-') + "H"), "more than 64 minus signs"));
  CHECK(formula_error("(((H)))") == "");
  CHECK(ix::formula_dims(decls("W * (H - W)"), 2) == std::vector<int>{1, 0});
  CHECK(ix::formula_dims(decls(""), 0).empty());
}

TEST_CASE("spec: a derived dim is computed at each point, never given, and named in errors") {
  const std::string dims = "dims: {M: free, N: free, NO: {derived: \"N - 2\"}}\n";
  CHECK(spec_error(dims, "[{M: 4, N: 9}]") == "");
  CHECK(has(spec_error(dims, "[{M: 4, N: 9, NO: 7}]"),
            "w.yaml:9:36: timing.points[0].NO: dim 'NO' is derived (N - 2): it is computed"));
  CHECK(has(spec_error(dims, "[{M: 4, N: 2}]"),
            "timing.points[0]: no input is valid at this point: NO = N - 2 is 0 at M=4,N=2"));
  CHECK(has(spec_error("dims: {M: free, N: free, NO: {derived: \"N - Q\"}}\n", "[{M: 4, N: 9}]"),
            "w.yaml:3:40: dims.NO.derived: column 5 of the formula: unknown name 'Q'"));
  CHECK(has(spec_error("dims: {M: free, N: free, NO: {of: \"N\"}}\n", "[{M: 4, N: 9}]"),
            "unknown key 'of'"));
  CHECK(has(spec_error("dims: {M: free, N: free, NO: derived}\n", "[{M: 4, N: 9}]"),
            "free, reduced or {derived: FORMULA}"));

  const kq::Spec spec = kq::load_spec(kV2 / "window_max3.yaml");
  const auto& p = *spec.shaped->program;
  REQUIRE(p.decls.dims.size() == 3);
  CHECK(p.decls.dims[2].derived == "N - 3 + 1");
  CHECK(spec.shaped->timing_points[0].dims == std::vector<std::int64_t>{64, 4096, 4094});
  CHECK(has(ix::canonical_text(p), "derived: d2 = d1 - 3 + 1\n"));
}

TEST_CASE("--points: derived dims computed; a label's value must agree with the formula") {
  const kq::Spec spec = kq::load_spec(kV2 / "window_max3.yaml");
  const auto c = kq::choose_points(spec, {"{M: 8, N: 100}", "M=64,N=4096,NO=4094"});
  REQUIRE(c.added.size() == 1);
  CHECK(c.added[0].dims == std::vector<std::int64_t>{8, 100, 98});
  CHECK(c.keys == std::vector<std::int64_t>{2, 1});
  CHECK(
      has(refusal(spec, "M=64,N=4096,NO=4000"), "NO is derived (N - 3 + 1), 4094 there, not 4000"));
  CHECK(has(refusal(spec, "{M: 8, N: 2}"), "NO = N - 3 + 1 is 0 at M=8,N=2"));
  CHECK(has(refusal(spec, "{M: 8}"), "N is not given (every dim is: M, N)"));
}

TEST_CASE("the planner: every case's derived dim is its formula's, at least 1") {
  const kq::Spec spec = kq::load_spec(kV2 / "window_max3.yaml");
  kq::PlanOptions o;
  o.quick = true;
  const auto cases = kq::plan_cases(spec, o);
  CHECK(cases.size() > 50);
  int short_inputs = 0;
  for (const kq::Case& c : cases) {
    CAPTURE(c.name);
    REQUIRE(c.dims.size() == 3);
    CHECK(c.dims[1] >= 3);
    CHECK(c.dims[2] == c.dims[1] - 2);
    short_inputs += c.dims[1] == 3;
  }
  CHECK(short_inputs > 0);  // the shortest input the window admits is a case
}
