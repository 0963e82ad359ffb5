// Padded inputs (`pad:`): a read outside the input gives its pad, as a padded pooling or
// convolution reads. The reference against loops written here (both walks, and at samples), the
// range check that no longer refuses such reads, the spec's errors, the canonical form, and the
// integer value class (a pad that is not an integer makes the output inexact). And a subscript
// (e) / S, a position only where the division is exact (a transposed convolution's stride): the
// pad elsewhere, or an error without one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/machine.hpp"
#include "indexed/parser.hpp"
#include "indexed/subscript_range.hpp"
#include "kq/indexed_text.hpp"
#include "qualify/exact_integers.hpp"
#include "spec/spec.hpp"

namespace {

namespace ix = kq::ix;
using kq::DType;

constexpr double kInf = std::numeric_limits<double>::infinity();

// x[B, L] read by windows of K at stride S, dilation D, padding P: y[b, i] over LO outputs.
struct Pool {
  std::int64_t k, s, d, p;
  std::int64_t out(std::int64_t l) const { return (l + 2 * p - d * (k - 1) - 1) / s + 1; }
  std::string subscript() const {
    return std::to_string(s) + " * i + " + std::to_string(d) + " * k - " + std::to_string(p);
  }
};

ix::Program pool_program(const Pool& pool, const std::string& reduction, std::optional<double> pad,
                         const std::string& after = "") {
  ix::Declarations d;
  d.dims = {
      {"B", ix::DimKind::free, ""}, {"L", ix::DimKind::free, ""}, {"LO", ix::DimKind::free, ""}};
  d.tensors = {{"x", ix::Role::input, DType::f32, {"B", "L"}, pad},
               {"y", ix::Role::output, DType::f32, {"B", "LO"}, std::nullopt}};
  const std::string text = "y[b, i] = " + reduction + "(k : " + std::to_string(pool.k) + ", x[b, " +
                           pool.subscript() + "])" + after;
  ix::ParseResult r = ix::parse_program(text, d);
  INFO(text, ": ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  return *r.program;
}

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(u(rng));
  return v;
}

// The pooling by hand: each window's terms in order, outside x the pad.
std::vector<double> pool_by_hand(const Pool& pool, const std::vector<double>& x, std::int64_t b,
                                 std::int64_t l, bool max, double pad) {
  const std::int64_t lo = pool.out(l);
  std::vector<double> y;
  for (std::int64_t r = 0; r < b; ++r) {
    for (std::int64_t i = 0; i < lo; ++i) {
      double acc = max ? -kInf : 0.0;
      for (std::int64_t k = 0; k < pool.k; ++k) {
        const std::int64_t at = pool.s * i + pool.d * k - pool.p;
        const double v = at >= 0 && at < l ? x[static_cast<std::size_t>(r * l + at)] : pad;
        acc = max ? std::max(acc, v) : acc + v;
      }
      y.push_back(static_cast<float>(max ? acc : acc / static_cast<double>(pool.k)));
    }
  }
  return y;
}

ix::Tensors run(const ix::Program& p, const Pool& pool, const std::vector<double>& x,
                std::int64_t b, std::int64_t l) {
  return ix::evaluate(p, {{"B", b}, {"L", l}, {"LO", pool.out(l)}},
                      {{"x", ix::Buffer::of(DType::f32, {b, l}, x)}});
}

std::vector<double> values(const ix::Buffer& buf) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < buf.numel(); ++i) v.push_back(buf.get(i));
  return v;
}

// The loader's refusal of spec `text` (as w.yaml), or "" when it loads.
std::string spec_refusal(const std::string& text) {
  try {
    kq::parse_spec(text, "w.yaml");
  } catch (const kq::SpecError& e) {
    return e.what();
  }
  return "";
}

// A spec reading x[m, n - 1] whose inputs are `inputs`, refused or not.
std::string spec_error(const std::string& inputs) {
  return spec_refusal("kq_spec: 2\nop: w\ndims: {M: free, N: free}\ninputs: " + inputs +
                      "\noutputs: {y: {dtype: f32, shape: [M, N]}}\n"
                      "semantics: |\n  y[m, n] = x[m, n - 1]\ncompare: {y: {ulp: 1}}\n"
                      "timing: {points: [{M: 2, N: 3}]}\ndecision: {baseline: cpu_tbb}\n");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a padded input reads its pad outside its extent: max and average poolings by hand") {
  // KernelBench 41's window (8 at stride 1, dilation 3, padding 4) and a strided one; lengths
  // below, at and past the lanes' run of 64.
  for (const Pool pool : {Pool{8, 1, 3, 4}, Pool{3, 2, 2, 3}}) {
    for (const std::int64_t l : {std::int64_t{14}, std::int64_t{64}, std::int64_t{301}}) {
      if (pool.out(l) < 1) continue;
      const std::vector<double> x = random_values(static_cast<std::size_t>(3 * l), 7);
      INFO("k ", pool.k, " stride ", pool.s, " dilation ", pool.d, " padding ", pool.p, ", L ", l);
      const ix::Program mx = pool_program(pool, "max", -kInf);
      CHECK(values(run(mx, pool, x, 3, l).at("y")) == pool_by_hand(pool, x, 3, l, true, -kInf));
      const ix::Program avg = pool_program(pool, "sum", 0.0, " / " + std::to_string(pool.k));
      const std::vector<double> got = values(run(avg, pool, x, 3, l).at("y"));
      const std::vector<double> want = pool_by_hand(pool, x, 3, l, false, 0.0);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        CHECK(std::fabs(got[i] - want[i]) <= 1e-6 * std::max(1.0, std::fabs(want[i])));
    }
  }
}

TEST_CASE("padded reads: the same bits a run at a time, one at a time and at samples") {
  const Pool pool{8, 1, 3, 4};
  const std::int64_t l = 200;
  const std::vector<double> x = random_values(static_cast<std::size_t>(2 * l), 11);
  const ix::Program p = pool_program(pool, "max", -kInf, " + 0.5 * x[b, i - 2]");
  const ix::Tensors lanes = run(p, pool, x, 2, l);
  ix::set_reference_lanes(false);
  const ix::Tensors one = run(p, pool, x, 2, l);
  ix::set_reference_lanes(true);
  CHECK(values(lanes.at("y")) == values(one.at("y")));
  const std::vector<ix::Sample> samples = {{"y", {0, 0}}, {"y", {1, 1}}, {"y", {1, 186}}};
  const std::vector<double> at =
      ix::evaluate_at(p, {{"B", 2}, {"L", l}, {"LO", pool.out(l)}},
                      {{"x", ix::Buffer::of(DType::f32, {2, l}, x)}}, samples);
  const ix::Buffer& y = lanes.at("y");
  CHECK(at[0] == y.get(0));
  CHECK(at[1] == y.get(pool.out(l) + 1));
  CHECK(at[2] == y.get(pool.out(l) + 186));
}

TEST_CASE("a padded input's subscripts are not refused before the run; an unpadded one's are") {
  const Pool pool{8, 1, 3, 4};
  const std::vector<std::int64_t> dims = {2, 100, pool.out(100)};
  CHECK_FALSE(ix::subscript_out_of_range(pool_program(pool, "max", -kInf), dims));
  const auto bad = ix::subscript_out_of_range(pool_program(pool, "max", std::nullopt), dims);
  REQUIRE(bad);
  CHECK(has(*bad, "subscript 2 of 'x' reaches -4, outside [0, 100)"));
  // Without a pad the reference refuses the read too.
  const std::vector<double> x = random_values(200, 3);
  CHECK_THROWS_WITH_AS(run(pool_program(pool, "max", std::nullopt), pool, x, 2, 100),
                       doctest::Contains("subscript 2 of 'x' is -4, outside [0, 100)"),
                       ix::EvalError);
}

TEST_CASE("the spec's pad: a value of the input's float dtype, on inputs only") {
  CHECK(spec_error("{x: {dtype: f32, shape: [M, N], pad: -inf}}").empty());
  CHECK(spec_error("{x: {dtype: f32, shape: [M, N], pad: -.inf}}").empty());
  CHECK(spec_error("{x: {dtype: bf16, shape: [M, N], pad: 0.5}}").empty());
  CHECK(has(spec_error("{x: {dtype: f32, shape: [M, N], pad: .nan}}"),
            "a pad is a number or an infinity, not NaN"));
  CHECK(has(spec_error("{x: {dtype: f16, shape: [M, N], pad: 1e10}}"),
            "pad 1e10 is not a f16 value"));
  CHECK(has(spec_error("{x: {dtype: bf16, shape: [M, N], pad: 0.1}}"), "is not a bf16 value"));
  CHECK(has(spec_error("{x: {dtype: i32, shape: [M, N], pad: 0}}"),
            "a pad is for value inputs (f16, bf16, f32, f64); this input is i32"));
  CHECK(has(spec_error("{x: {dtype: f32, shape: [M, N], pad: zero}}"), "expected a number"));
  // An output has no pad: its key is unknown there.
  const std::string out =
      "kq_spec: 2\nop: w\ndims: {M: free}\ninputs: {x: {dtype: f32, shape: [M]}}\n"
      "outputs: {y: {dtype: f32, shape: [M], pad: 0}}\nsemantics: |\n  y[m] = x[m]\n"
      "compare: {y: {ulp: 1}}\ntiming: {points: [{M: 2}]}\ndecision: {baseline: cpu_tbb}\n";
  const std::string why = spec_refusal(out);
  CHECK(has(why, "pad"));
  CHECK(has(why, "w.yaml:5"));
}

TEST_CASE("the canonical form says the pad; the value class of integers does not hold past one") {
  const Pool pool{8, 1, 3, 4};
  const std::string padded = ix::canonical_text(pool_program(pool, "max", -kInf));
  CHECK(has(padded, "shapes: in0[d0, d1] pad -inf out0[d0, d2]"));
  CHECK_FALSE(ix::computes(pool_program(pool, "max", std::nullopt), padded));
  CHECK(has(ix::canonical_text(pool_program(pool, "max", 0.0)), "in0[d0, d1] pad 0 "));
  const std::vector<std::int64_t> dims = {2, 100, pool.out(100)};
  CHECK_FALSE(kq::exact_integer_output(pool_program(pool, "max", -kInf), 1, dims, DType::f32));
  CHECK(kq::exact_integer_output(pool_program(pool, "max", 0.0), 1, dims, DType::f32));
  CHECK(kq::exact_integer_output(pool_program(pool, "sum", 2.0), 1, dims, DType::f32));
  CHECK_FALSE(kq::exact_integer_output(pool_program(pool, "sum", 0.5), 1, dims, DType::f32));
}

namespace {

// A transposed convolution of one channel, x[L] to y[LO], kernel K, stride S, padding P,
// dilation D, by hand: y[t] = sum over k of x[(t + P - D k) / S] w[k] where exact and inside x.
std::vector<double> transposed_by_hand(const std::vector<double>& x, const std::vector<double>& w,
                                       std::int64_t s, std::int64_t p, std::int64_t d,
                                       std::int64_t lo) {
  std::vector<double> y;
  const auto l = static_cast<std::int64_t>(x.size());
  for (std::int64_t t = 0; t < lo; ++t) {
    double acc = 0.0;
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(w.size()); ++k) {
      const std::int64_t e = t + p - d * k;
      if (e % s != 0 || e / s < 0 || e / s >= l) continue;
      acc += x[static_cast<std::size_t>(e / s)] * w[static_cast<std::size_t>(k)];
    }
    y.push_back(static_cast<float>(acc));
  }
  return y;
}

ix::ParseResult transposed_program(const std::string& subscript, std::optional<double> pad) {
  ix::Declarations d;
  d.dims = {{"L", ix::DimKind::free, ""}, {"LO", ix::DimKind::free, ""}};
  d.tensors = {{"x", ix::Role::input, DType::f32, {"L"}, pad},
               {"w", ix::Role::input, DType::f32, {3}, std::nullopt},
               {"y", ix::Role::output, DType::f32, {"LO"}, std::nullopt}};
  return ix::parse_program("y[t] = sum(k, x[" + subscript + "] * w[k])", d);
}

std::string parse_error(const std::string& subscript) {
  const ix::ParseResult r = transposed_program(subscript, 0.0);
  return r.error ? r.error->text() : "";
}

}  // namespace

TEST_CASE("a subscript (e) / S reads a position where the division is exact, the pad elsewhere") {
  // KernelBench 79's stride 2, padding 1, dilation 2, and a stride of 5 (81's).
  for (const std::int64_t s : {std::int64_t{2}, std::int64_t{5}}) {
    const std::int64_t l = 150, lo = (l - 1) * s - 2 + 4 + 1;
    const std::string sub = "(t + 1 - 2 * k) / " + std::to_string(s);
    const ix::ParseResult r = transposed_program(sub, 0.0);
    REQUIRE(r.program.has_value());
    const std::vector<double> x = random_values(static_cast<std::size_t>(l), 5);
    const std::vector<double> w = random_values(3, 6);
    const ix::DimValues dims = {{"L", l}, {"LO", lo}};
    const ix::Tensors in = {{"x", ix::Buffer::of(DType::f32, {l}, x)},
                            {"w", ix::Buffer::of(DType::f32, {3}, w)}};
    const std::vector<double> want = transposed_by_hand(x, w, s, 1, 2, lo);
    const std::vector<double> got = values(ix::evaluate(*r.program, dims, in).at("y"));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("stride ", s, " element ", i);
      CHECK(std::fabs(got[i] - want[i]) <= 1e-6 * std::max(1.0, std::fabs(want[i])));
    }
    ix::set_reference_lanes(false);
    CHECK(values(ix::evaluate(*r.program, dims, in).at("y")) == got);
    ix::set_reference_lanes(true);
    CHECK(ix::canonical_text(*r.program).find("in0[div(sub(add(i0, 1), mul(2, i1)), ") !=
          std::string::npos);
  }
}

TEST_CASE("(e) / S: without a pad an inexact division is an error; only a whole subscript") {
  const ix::ParseResult r = transposed_program("(t + 1 - 2 * k) / 2", std::nullopt);
  REQUIRE(r.program.has_value());
  const std::vector<double> x = {1.0, 2.0, 3.0, 4.0}, w = {1.0, 1.0, 1.0};
  const ix::Tensors in = {{"x", ix::Buffer::of(DType::f32, {4}, x)},
                          {"w", ix::Buffer::of(DType::f32, {3}, w)}};
  CHECK_THROWS_WITH_AS(ix::evaluate(*r.program, {{"L", 4}, {"LO", 4}}, in),
                       doctest::Contains("subscript 1 of 'x' is 1 / 2, not a position (the "
                                         "division is not exact)"),
                       ix::EvalError);
  CHECK(has(parse_error("t / 0"), "a subscript divides by a positive integer constant"));
  CHECK(has(parse_error("t / L"), "a subscript divides by a positive integer constant"));
  CHECK(has(parse_error("t / 2 + 1"), "or one divided by a positive integer constant as a whole"));
  CHECK(has(parse_error("(t / 2) / 2"), "as a whole"));
  // The range check counts the positions the division reaches: (t - k) / 2 over t < 7, k < 3
  // reads the multiples of 2 in [-2, 6], positions -1 to 3, so x needs 4 elements and a pad.
  const ix::ParseResult q = transposed_program("(t - k) / 2", std::nullopt);
  REQUIRE(q.program.has_value());
  const auto bad = ix::subscript_out_of_range(*q.program, {4, 7});
  REQUIRE(bad);
  CHECK(has(*bad, "reaches -1, outside [0, 4)"));
  const ix::ParseResult padded = transposed_program("(t - k) / 2", 0.0);
  CHECK_FALSE(ix::subscript_out_of_range(*padded.program, {4, 7}));
  const ix::ParseResult ahead = transposed_program("(t + 2) / 2", std::nullopt);
  CHECK_FALSE(ix::subscript_out_of_range(*ahead.program, {4, 5}));  // 1 to 3
  CHECK(ix::subscript_out_of_range(*ahead.program, {4, 7}));        // 1 to 4
}
