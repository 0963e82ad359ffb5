// Spec format 2 (shaped operations): the specs of tests/data/specs_v2 load into Spec::shaped;
// each problem is reported at its file:line:column and field, the statements' errors inside the
// YAML block; tolerance formulas evaluate at a point; format 1 specs load as before and nothing
// runs a format-2 spec yet.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "spec/spec.hpp"

namespace fs = std::filesystem;
using kq::DType;
using kq::ShapedCompare;
using kq::Spec;
using kq::SpecError;
namespace ix = kq::ix;

namespace {

const fs::path kRoot = KQ_SOURCE_DIR;
const fs::path kV2 = kRoot / "tests/data/specs_v2";

// A softmax with each section replaceable, so that a test changes one thing.
struct Softmax {
  std::string dims = "dims: {M: free, N: reduced}\n";
  std::string params = "";
  std::string inputs = "inputs: {x: {dtype: f32, shape: [M, N]}}\n";
  std::string outputs = "outputs: {y: {dtype: f32, shape: [M, N]}}\n";
  std::string temporaries = "temporaries: {mx: {shape: [M]}, s: {shape: [M]}}\n";
  std::string semantics =
      "semantics: |\n"
      "  mx[m] = max(n, x[m, n])\n"
      "  s[m] = sum(n, exp(x[m, n] - mx[m]))\n"
      "  y[m, n] = exp(x[m, n] - mx[m]) / s[m]\n";
  std::string compare = "compare: {y: {rtol: 4 * u * sqrt(N)}}\n";
  std::string qualification = "";
  std::string timing = "timing: {points: [{M: 32, N: 64}]}\n";

  std::string text() const {
    return "kq_spec: 2\nop: softmax\n" + dims + params + inputs + outputs + temporaries +
           semantics + compare + qualification + timing + "decision: {baseline: cpu_tbb}\n";
  }
};

// The error parse_spec gives; fails the test when it loads.
SpecError error_of(const std::string& text) {
  try {
    kq::parse_spec(text, "t.yaml");
  } catch (const SpecError& e) {
    return e;
  }
  FAIL("the spec loaded:\n" << text);
  return SpecError("", 0, 0, "", "");
}

void check_error(const std::string& text, int line, int column, const std::string& field,
                 const std::string& message) {
  const SpecError e = error_of(text);
  INFO(std::string(e.what()));
  CHECK(e.line() == line);
  CHECK(e.column() == column);
  CHECK(e.field() == field);
  CHECK(e.message().find(message) != std::string::npos);
}

const ix::TensorDecl& tensor(const Spec& s, const std::string& name) {
  const auto& t = s.shaped->program->decls.tensors;
  const auto it = std::find_if(t.begin(), t.end(), [&](const auto& d) { return d.name == name; });
  REQUIRE(it != t.end());
  return *it;
}

}  // namespace

TEST_CASE("a softmax loads: dims, tensors, statements, compare, points") {
  const Spec s = kq::load_spec(kV2 / "softmax.yaml");
  REQUIRE(s.shaped);
  const kq::ShapedContract& c = *s.shaped;
  CHECK(s.op.op == "softmax");
  CHECK(c.compute == kq::DType::f32);
  REQUIRE(c.program->decls.dims.size() == 2);
  CHECK(c.program->decls.dims[1].kind == ix::DimKind::reduced);
  CHECK(tensor(s, "x").role == ix::Role::input);
  CHECK(tensor(s, "x").dtype == DType::bf16);
  CHECK(tensor(s, "mx").role == ix::Role::temporary);
  CHECK(tensor(s, "mx").dtype == DType::f64);
  CHECK(c.program->statements.size() == 4);
  REQUIRE(c.compare.size() == 1);
  CHECK(c.compare[0].kind == ShapedCompare::Kind::ulp);
  CHECK(c.compare[0].max_ulp == 2);
  REQUIRE(c.qualification_points.size() == 2);
  CHECK(c.qualification_points[1].dims == std::vector<std::int64_t>{7, 4099});
  REQUIRE(c.timing_points.size() == 2);
  CHECK(c.timing_points[0].dims == std::vector<std::int64_t>{32768, 4096});
  CHECK(s.op.layouts.contiguous_only);
  CHECK(s.decision.baselines == std::vector<std::string>{"torch_compile"});
  CHECK(s.decision.eager == std::vector<std::string>{"torch_eager"});
}

TEST_CASE("a layer norm loads: a param, three outputs, tolerances over N and u") {
  const Spec s = kq::load_spec(kV2 / "layer_norm.yaml");
  REQUIRE(s.shaped);
  const kq::ShapedContract& c = *s.shaped;
  REQUIRE(c.program->decls.params.size() == 1);
  CHECK(c.program->decls.params[0].value == doctest::Approx(1e-5));
  REQUIRE(c.compare.size() == 3);  // y, mean, rstd, in the order of the outputs
  const ShapedCompare& mean = c.compare[1];
  CHECK(c.program->decls.tensors[static_cast<std::size_t>(mean.output)].name == "mean");
  REQUIRE(mean.rtol);
  REQUIRE(mean.atol);
  // The grid: M outermost.
  REQUIRE(c.timing_points.size() == 2);
  CHECK(c.timing_points[0].dims == std::vector<std::int64_t>{4096, 4096});
  CHECK(c.timing_points[1].dims == std::vector<std::int64_t>{32768, 4096});

  SUBCASE("tolerance formulas evaluate at a point") {
    const double u = std::ldexp(1.0, -24);
    CHECK(kq::evaluate(*mean.rtol, c, c.timing_points[0]) == 4 * u * 64);
    CHECK(kq::evaluate(*c.compare[2].rtol, c, kq::Point{{7, 16}}) == 8 * u * 4);
    CHECK(kq::evaluate(*mean.atol, c, c.timing_points[0]) == 1e-6);  // max(u, 1e-6)
  }
}

TEST_CASE("an argmax loads with an i64 output compared bitwise") {
  const Spec s = kq::load_spec(kV2 / "argmax.yaml");
  REQUIRE(s.shaped);
  CHECK(tensor(s, "idx").dtype == DType::i64);
  CHECK(s.shaped->compare.at(0).kind == ShapedCompare::Kind::bitwise);
  CHECK(s.op.layouts.min_alignment_bytes == 8);  // the widest input or output: i64
}

TEST_CASE("a cross-entropy loads: i64 targets, a gather, a scalar mean, a cost override") {
  const Spec s = kq::load_spec(kV2 / "cross_entropy.yaml");
  REQUIRE(s.shaped);
  CHECK(tensor(s, "t").dtype == DType::i64);
  CHECK(tensor(s, "loss").shape.empty());
  CHECK(s.shaped->compare.at(0).kind == ShapedCompare::Kind::accumulation_bound);
  REQUIRE(s.shaped->cost.bytes);
  CHECK(kq::evaluate(*s.shaped->cost.bytes, *s.shaped, kq::Point{{2, 3}}) == 4 * 6 + 16 + 4);
  CHECK_FALSE(s.shaped->cost.flops);
}

TEST_CASE("a statement's error points at its line and column inside the YAML block") {
  Softmax s;
  s.semantics =
      "semantics: |\n"
      "  mx[m] = max(n, x[m, n])\n"
      "  s[m] = sum(n, exp(x[m, n] - mx[m]))\n"
      "  y[m, n] = exp(x[m, k] - mx[m]) / s[m]\n";
  // `semantics: |` is line 7; the third statement is on line 10, `k` at column 20 of the
  // statement, 22 of the file (two spaces of indentation).
  check_error(s.text(), 10, 22, "semantics", "index 'k' is used but never bound");
  const SpecError e = error_of(s.text());
  CHECK(e.message().find("(in `y[m, n] = exp(x[m, k] - mx[m]) / s[m]`)") != std::string::npos);

  SUBCASE("deeper indentation and a blank line keep the mapping") {
    s.semantics =
        "semantics: |\n"
        "    mx[m] = max(n, x[m, n])\n"
        "\n"
        "    s[m] = sum(m, exp(x[m, n] - mx[m]))\n"
        "    y[m, n] = exp(x[m, n] - mx[m]) / s[m]\n";
    check_error(s.text(), 10, 16, "semantics",
                "reduction over 'm', which the left-hand side binds");
  }
  SUBCASE("a one-line quoted statement") {
    s.temporaries = "";
    s.semantics = "semantics: \"y[m, n] = x[m, q]\"\n";
    check_error(s.text(), 6, 28, "semantics", "index 'q' is used but never bound");
  }
  SUBCASE("a shape that does not match") {
    s.inputs = "inputs: {x: {dtype: f32, shape: [M, N]}, b: {dtype: f32, shape: [M]}}\n";
    s.semantics =
        "semantics: |\n"
        "  mx[m] = max(n, x[m, n] + b[n])\n"
        "  s[m] = sum(n, exp(x[m, n] - mx[m]))\n"
        "  y[m, n] = exp(x[m, n] - mx[m]) / s[m]\n";
    check_error(s.text(), 8, 30, "semantics", "index 'n' ranges over N but dimension 1 of 'b'");
  }
}

TEST_CASE("declaration errors name the key, with the nearest name") {
  Softmax s;
  SUBCASE("an unknown top-level key") {
    s.dims = "dimz: {M: free, N: reduced}\n";
    check_error(s.text(), 3, 1, "dimz", "unknown key 'dimz'; did you mean 'dims'?");
  }
  SUBCASE("a dim used in no tensor") {
    s.dims = "dims: {M: free, N: reduced, K: free}\n";
    check_error(s.text(), 3, 29, "dims.K", "dim 'K' is in no tensor's shape");
  }
  SUBCASE("a shape naming an unknown dim") {
    s.inputs = "inputs: {x: {dtype: f32, shape: [M, Nn]}}\n";
    check_error(s.text(), 4, 37, "inputs.x.shape[1]", "unknown dim 'Nn'; did you mean 'N'?");
  }
  SUBCASE("an unknown dtype") {
    s.inputs = "inputs: {x: {dtype: i46, shape: [M, N]}}\n";
    check_error(s.text(), 4, 21, "inputs.x.dtype", "did you mean 'i64'?");
  }
  SUBCASE("an unknown key in a tensor") {
    s.inputs = "inputs: {x: {dtype: f32, shap: [M, N]}}\n";
    check_error(s.text(), 4, 26, "inputs.x.shap", "did you mean 'shape'?");
  }
  SUBCASE("a name declared twice across sections") {
    s.outputs = "outputs: {x: {dtype: f32, shape: [M, N]}}\n";
    check_error(s.text(), 5, 11, "outputs.x", "'x' is already declared (inputs.x, line 4)");
  }
  SUBCASE("an input the statements never read") {
    s.inputs = "inputs: {x: {dtype: f32, shape: [M, N]}, w: {dtype: f32, shape: [N]}}\n";
    check_error(s.text(), 4, 42, "inputs.w", "input 'w' is not read by the semantics");
  }
  SUBCASE("a tensor named like a function") {
    s.inputs = "inputs: {x: {dtype: f32, shape: [M, N]}, exp: {dtype: f32, shape: [N]}}\n";
    check_error(s.text(), 4, 42, "inputs.exp", "named like a function");
  }
  SUBCASE("a format-1 dtype") {
    s.dims = "dtype: f32\n" + s.dims;
    check_error(s.text(), 3, 8, "dtype", "a top-level dtype is format 1's");
  }
}

TEST_CASE("compare errors: a missing rule, an unknown output, a bad formula") {
  Softmax s;
  SUBCASE("an output without a rule") {
    s.outputs = "outputs: {y: {dtype: f32, shape: [M, N]}, z: {dtype: f32, shape: [M]}}\n";
    s.semantics += "  z[m] = s[m]\n";
    check_error(s.text(), 12, 10, "compare.z", "output 'z' has no compare rule");
  }
  SUBCASE("a rule for something that is not an output") {
    s.compare = "compare: {y: bitwise, yy: bitwise}\n";
    check_error(s.text(), 11, 23, "compare.yy", "unknown key 'yy'; did you mean 'y'?");
  }
  SUBCASE("an unknown name in a tolerance, at its column in the scalar") {
    s.compare = "compare: {y: {rtol: 4 * v * sqrt(N)}}\n";
    check_error(s.text(), 11, 25, "compare.y.rtol", "unknown name 'v' (did you mean 'u'?)");
  }
  SUBCASE("a syntax error in a quoted tolerance") {
    s.compare = "compare: {y: {atol: \"max(u, 1e-6\"}}\n";
    check_error(s.text(), 11, 33, "compare.y.atol", "expected ')' closing max(...)");
  }
  SUBCASE("ulp and rtol together") {
    s.compare = "compare: {y: {ulp: 2, rtol: u}}\n";
    check_error(s.text(), 11, 14, "compare.y", "alternatives");
  }
  SUBCASE("an integer output compares bitwise") {
    s.outputs = "outputs: {y: {dtype: f32, shape: [M, N]}, i: {dtype: i32, shape: [M]}}\n";
    s.semantics += "  i[m] = argmax(n, x[m, n])\n";
    s.compare = "compare: {y: bitwise, i: {ulp: 1}}\n";
    check_error(s.text(), 12, 26, "compare.i", "integer and bool outputs compare bitwise");
  }
}

TEST_CASE("point errors: a missing dim, an unknown one, too many elements") {
  Softmax s;
  SUBCASE("a point missing a dim") {
    s.timing = "timing: {points: [{M: 32}]}\n";
    check_error(s.text(), 12, 19, "timing.points[0]", "no value for dim 'N'");
  }
  SUBCASE("a point naming an unknown dim") {
    s.timing = "timing: {points: [{M: 32, N: 4, K: 2}]}\n";
    check_error(s.text(), 12, 33, "timing.points[0].K", "unknown key 'K'");
  }
  SUBCASE("a value that is not a positive integer") {
    s.qualification = "qualification: {points: [{M: 0, N: 4}]}\n";
    check_error(s.text(), 12, 30, "qualification.points[0].M", "must be a positive integer");
  }
  SUBCASE("a tensor beyond 2^40 elements") {
    s.timing = "timing: {points: [{M: 1048576, N: 2097152}]}\n";
    check_error(s.text(), 12, 19, "timing.points[0]", "tensor 'x' would hold more than 2^40");
  }
  SUBCASE("a grid of too many points") {
    std::string values;
    for (int i = 1; i <= 100; ++i) values += (i > 1 ? ", " : "") + std::to_string(i);
    s.timing = "timing: {grid: {M: [" + values + "], N: [" + values + "]}}\n";
    check_error(s.text(), 12, std::string("timing: {grid: {M: [" + values + "], N: ").size() + 1,
                "timing.grid.N", "more than 4096 points");
  }
  SUBCASE("a point given twice") {
    s.timing = "timing: {points: [{M: 1, N: 2}, {N: 2, M: 1}]}\n";
    check_error(s.text(), 12, 33, "timing.points[1]", "the same point as timing.points[0]");
  }
  SUBCASE("timing without points") {
    s.timing = "timing: {l2: flush}\n";
    check_error(s.text(), 12, 9, "timing.points", "missing required key 'points' (or 'grid')");
  }
}

TEST_CASE("a point where index arithmetic leaves a tensor is refused, naming the subscript") {
  const std::string text =
      "kq_spec: 2\nop: group_sum\ndims: {B: free, G: free, C: reduced, K: free}\n"
      "inputs: {x: {dtype: f32, shape: [B, K]}, w: {dtype: f32, shape: [C]}}\n"
      "outputs: {y: {dtype: f32, shape: [B, G]}}\n"
      "semantics: |\n  y[b, g] = sum(j, x[b, g * C + j] * w[j])\ncompare: {y: {rtol: 1e-5}}\n"
      "timing: {points: [{B: 2, G: 4, C: 8, K: 32}, {B: 2, G: 4, C: 8, K: 31}]}\n"
      "decision: {baseline: cpu_tbb}\n";
  check_error(text, 9, 46, "timing.points[1]",
              "no input is valid at this point: line 1 `y[b, g] = sum(j, x[b, g * C + j] * w[j])`: "
              "subscript 2 of 'x' reaches 31, outside [0, 31)");
}

TEST_CASE("every shipped spec loads, in the format its kq_spec names") {
  for (const fs::path dir : {kRoot / "specs", kRoot / "tests/data/specs"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".yaml") continue;
      CAPTURE(e.path());
      const Spec s = kq::load_spec(e.path());
      CHECK(s.shaped.has_value() == (s.text.find("kq_spec: 2") != std::string::npos));
      CHECK((s.op.program != nullptr) == s.shaped.has_value());
    }
  }
}
