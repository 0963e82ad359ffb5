// The reference of indexed statements against hand-computed values and against straightforward
// float64 loops written here, independently of the evaluator: softmax, log_softmax, layer norm,
// RMS norm, sums, argmax, scans, cross-entropy, views; one rounding per output; compensated sums;
// sampled evaluation; independence from the thread count; long reductions in chunks.
#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/instance.hpp"
#include "indexed/machine.hpp"  // kReduceChunk
#include "indexed/parser.hpp"
#include "kq/half.hpp"

namespace {

using namespace kq::ix;
using kq::DType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Program parse(std::string_view text, const Declarations& d) {
  ParseResult r = parse_program(text, d);
  INFO("error: ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  return *r.program;
}

std::vector<double> random_values(std::size_t n, unsigned seed, double lo = -3.0, double hi = 3.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

std::vector<double> values_of(const Buffer& b) {
  std::vector<double> v(static_cast<std::size_t>(b.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = b.get(static_cast<std::int64_t>(i));
  return v;
}

// Within a few ulps of float64: the evaluator sums with compensation, the loops here plainly.
void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i, ": got ", got[i], ", want ", want[i]);
    CHECK(std::fabs(got[i] - want[i]) <= 1e-14 * std::max(1.0, std::fabs(want[i])));
  }
}

void check_bitwise(const Tensors& a, const Tensors& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, buffer] : a) {
    INFO("output ", name);
    CHECK(buffer.bytes == b.at(name).bytes);
  }
}

Declarations rows(std::vector<TensorDecl> tensors) {
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
  d.params = {{"eps", 1e-5}};
  d.tensors = std::move(tensors);
  return d;
}

constexpr std::int64_t kM = 5, kN = 7;

}  // namespace

TEST_CASE("softmax against float64 loops") {
  const Program p = parse(
      "mx[m] = max(n, x[m, n])\n"
      "e[m, n] = exp(x[m, n] - mx[m])\n"
      "s[m] = sum(n, e[m, n])\n"
      "y[m, n] = e[m, n] / s[m]\n",
      rows({{"x", Role::input, DType::f64, {"M", "N"}},
            {"mx", Role::temporary, DType::f32, {"M"}},
            {"e", Role::temporary, DType::f32, {"M", "N"}},
            {"s", Role::temporary, DType::f32, {"M"}},
            {"y", Role::output, DType::f64, {"M", "N"}}}));
  const std::vector<double> x = random_values(kM * kN, 1);
  const Tensors out =
      evaluate(p, {{"M", kM}, {"N", kN}}, {{"x", Buffer::of(DType::f64, {kM, kN}, x)}});
  std::vector<double> want(x.size());
  for (std::int64_t m = 0; m < kM; ++m) {
    double mx = -INFINITY, s = 0.0;
    for (std::int64_t n = 0; n < kN; ++n) mx = std::max(mx, x[m * kN + n]);
    for (std::int64_t n = 0; n < kN; ++n) s += std::exp(x[m * kN + n] - mx);
    for (std::int64_t n = 0; n < kN; ++n) want[m * kN + n] = std::exp(x[m * kN + n] - mx) / s;
  }
  check_close(values_of(out.at("y")), want);
}

TEST_CASE("log_softmax against float64 loops") {
  const Program p = parse(
      "mx[m] = max(n, x[m, n])\n"
      "lse[m] = mx[m] + log(sum(n, exp(x[m, n] - mx[m])))\n"
      "y[m, n] = x[m, n] - lse[m]\n",
      rows({{"x", Role::input, DType::f64, {"M", "N"}},
            {"mx", Role::temporary, DType::f64, {"M"}},
            {"lse", Role::temporary, DType::f64, {"M"}},
            {"y", Role::output, DType::f64, {"M", "N"}}}));
  const std::vector<double> x = random_values(kM * kN, 2);
  const Tensors out =
      evaluate(p, {{"M", kM}, {"N", kN}}, {{"x", Buffer::of(DType::f64, {kM, kN}, x)}});
  std::vector<double> want(x.size());
  for (std::int64_t m = 0; m < kM; ++m) {
    double mx = -INFINITY, s = 0.0;
    for (std::int64_t n = 0; n < kN; ++n) mx = std::max(mx, x[m * kN + n]);
    for (std::int64_t n = 0; n < kN; ++n) s += std::exp(x[m * kN + n] - mx);
    for (std::int64_t n = 0; n < kN; ++n) want[m * kN + n] = x[m * kN + n] - mx - std::log(s);
  }
  check_close(values_of(out.at("y")), want);
}

TEST_CASE("layer norm with mean and rstd outputs and an eps param") {
  const Program p = parse(
      "mean[m] = sum(n, x[m, n]) / N\n"
      "var[m] = sum(n, (x[m, n] - mean[m]) * (x[m, n] - mean[m])) / N\n"
      "rstd[m] = 1 / sqrt(var[m] + eps)\n"
      "y[m, n] = (x[m, n] - mean[m]) * rstd[m] * w[n] + b[n]\n",
      rows({{"x", Role::input, DType::f64, {"M", "N"}},
            {"w", Role::input, DType::f64, {"N"}},
            {"b", Role::input, DType::f64, {"N"}},
            {"var", Role::temporary, DType::f32, {"M"}},
            {"y", Role::output, DType::f64, {"M", "N"}},
            {"mean", Role::output, DType::f64, {"M"}},
            {"rstd", Role::output, DType::f64, {"M"}}}));
  const std::vector<double> x = random_values(kM * kN, 3), w = random_values(kN, 4),
                            b = random_values(kN, 5);
  const Tensors out = evaluate(p, {{"M", kM}, {"N", kN}},
                               {{"x", Buffer::of(DType::f64, {kM, kN}, x)},
                                {"w", Buffer::of(DType::f64, {kN}, w)},
                                {"b", Buffer::of(DType::f64, {kN}, b)}});
  std::vector<double> y(x.size()), mean(kM), rstd(kM);
  for (std::int64_t m = 0; m < kM; ++m) {
    double s = 0.0, v = 0.0;
    for (std::int64_t n = 0; n < kN; ++n) s += x[m * kN + n];
    mean[m] = s / kN;
    for (std::int64_t n = 0; n < kN; ++n)
      v += (x[m * kN + n] - mean[m]) * (x[m * kN + n] - mean[m]);
    rstd[m] = 1.0 / std::sqrt(v / kN + 1e-5);
    for (std::int64_t n = 0; n < kN; ++n)
      y[m * kN + n] = (x[m * kN + n] - mean[m]) * rstd[m] * w[n] + b[n];
  }
  check_close(values_of(out.at("y")), y);
  check_close(values_of(out.at("mean")), mean);
  check_close(values_of(out.at("rstd")), rstd);
}

TEST_CASE("RMS norm against float64 loops") {
  const Program p = parse(
      "ms[m] = sum(n, x[m, n] * x[m, n]) / N\n"
      "y[m, n] = x[m, n] / sqrt(ms[m] + eps) * w[n]\n",
      rows({{"x", Role::input, DType::f64, {"M", "N"}},
            {"w", Role::input, DType::f64, {"N"}},
            {"ms", Role::temporary, DType::f32, {"M"}},
            {"y", Role::output, DType::f64, {"M", "N"}}}));
  const std::vector<double> x = random_values(kM * kN, 6), w = random_values(kN, 7);
  const Tensors out = evaluate(
      p, {{"M", kM}, {"N", kN}},
      {{"x", Buffer::of(DType::f64, {kM, kN}, x)}, {"w", Buffer::of(DType::f64, {kN}, w)}});
  std::vector<double> want(x.size());
  for (std::int64_t m = 0; m < kM; ++m) {
    double s = 0.0;
    for (std::int64_t n = 0; n < kN; ++n) s += x[m * kN + n] * x[m * kN + n];
    for (std::int64_t n = 0; n < kN; ++n)
      want[m * kN + n] = x[m * kN + n] / std::sqrt(s / kN + 1e-5) * w[n];
  }
  check_close(values_of(out.at("y")), want);
}

TEST_CASE("sum over dimension 1 of a 3-D tensor") {
  Declarations d;
  d.dims = {{"A", DimKind::free}, {"B", DimKind::reduced}, {"C", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f32, {"A", "B", "C"}},
               {"y", Role::output, DType::f64, {"A", "C"}}};
  const Program p = parse("y[a, c] = sum(b, x[a, b, c])", d);
  // x[a, b, c] = 100 a + 10 b + c: the sum over b of 3 is 300 a + 30 + 3 c.
  std::vector<double> x;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) x.push_back(100 * a + 10 * b + c);
  const Tensors out =
      evaluate(p, {{"A", 2}, {"B", 3}, {"C", 4}}, {{"x", Buffer::of(DType::f32, {2, 3, 4}, x)}});
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c) want.push_back(300 * a + 30 + 3 * c);
  CHECK(values_of(out.at("y")) == want);
}

TEST_CASE("argmax and argmin: the first of ties, the first NaN") {
  const Program p = parse(
      "amax[m] = argmax(n, x[m, n])\n"
      "amin[m] = argmin(n, x[m, n])\n",
      rows({{"x", Role::input, DType::f32, {"M", "N"}},
            {"amax", Role::output, DType::i64, {"M"}},
            {"amin", Role::output, DType::i32, {"M"}}}));
  const std::vector<double> x = {
      1,         5,         5,         0,          // ties: the first 5 and the 0
      2,         kNaN,      9,         kNaN,       // the first NaN for both
      -INFINITY, -INFINITY, -INFINITY, -INFINITY,  // all equal: index 0
  };
  const Tensors out = evaluate(p, {{"M", 3}, {"N", 4}}, {{"x", Buffer::of(DType::f32, {3, 4}, x)}});
  CHECK(values_of(out.at("amax")) == std::vector<double>{1, 1, 0});
  CHECK(values_of(out.at("amin")) == std::vector<double>{3, 1, 0});
  // Over an empty range there is no first index: an error.
  CHECK_THROWS_WITH_AS(
      evaluate(p, {{"M", 1}, {"N", 0}}, {{"x", Buffer::zeros(DType::f32, {1, 0})}}),
      doctest::Contains("argmax over an empty range"), EvalError);
}

TEST_CASE("the empty reductions: sum 0, prod 1, max -inf, min +inf") {
  const Program p = parse(
      "y[m] = sum(n, x[m, n]) + prod(n, x[m, n])\n"
      "hi[m] = max(n, x[m, n])\n"
      "lo[m] = min(n, x[m, n])\n",
      rows({{"x", Role::input, DType::f32, {"M", "N"}},
            {"y", Role::output, DType::f32, {"M"}},
            {"hi", Role::output, DType::f32, {"M"}},
            {"lo", Role::output, DType::f32, {"M"}}}));
  const Tensors out = evaluate(p, {{"M", 2}, {"N", 0}}, {{"x", Buffer::zeros(DType::f32, {2, 0})}});
  CHECK(values_of(out.at("y")) == std::vector<double>{1, 1});
  CHECK(values_of(out.at("hi")) == std::vector<double>{-INFINITY, -INFINITY});
  CHECK(values_of(out.at("lo")) == std::vector<double>{INFINITY, INFINITY});
}

TEST_CASE("cumsum inclusive, exclusive, reversed, and cumprod") {
  const Program p = parse(
      "inc[m, n] = cumsum(n, x[m, n])\n"
      "exc[m, n] = cumsum(n, x[m, n], exclusive)\n"
      "rev[m, n] = cumsum(n, x[m, n], reverse)\n"
      "both[m, n] = cumsum(n, x[m, n], exclusive, reverse)\n"
      "pro[m, n] = cumprod(n, x[m, n]) + 0 * cumprod(n, x[m, n], exclusive)\n"
      "pex[m, n] = cumprod(n, x[m, n], exclusive)\n",
      rows({{"x", Role::input, DType::f32, {"M", "N"}},
            {"inc", Role::output, DType::f32, {"M", "N"}},
            {"exc", Role::output, DType::f32, {"M", "N"}},
            {"rev", Role::output, DType::f32, {"M", "N"}},
            {"both", Role::output, DType::f32, {"M", "N"}},
            {"pro", Role::output, DType::f32, {"M", "N"}},
            {"pex", Role::output, DType::f32, {"M", "N"}}}));
  const std::vector<double> x = {1, 2, 3, 4, 2, 2, 2, 2};
  const Tensors out = evaluate(p, {{"M", 2}, {"N", 4}}, {{"x", Buffer::of(DType::f32, {2, 4}, x)}});
  CHECK(values_of(out.at("inc")) == std::vector<double>{1, 3, 6, 10, 2, 4, 6, 8});
  CHECK(values_of(out.at("exc")) == std::vector<double>{0, 1, 3, 6, 0, 2, 4, 6});
  CHECK(values_of(out.at("rev")) == std::vector<double>{10, 9, 7, 4, 8, 6, 4, 2});
  CHECK(values_of(out.at("both")) == std::vector<double>{9, 7, 4, 0, 6, 4, 2, 0});
  CHECK(values_of(out.at("pro")) == std::vector<double>{1, 2, 6, 24, 2, 4, 8, 16});
  CHECK(values_of(out.at("pex")) == std::vector<double>{1, 1, 2, 6, 1, 2, 4, 8});
}

TEST_CASE("cross-entropy with integer targets: a gather") {
  const Program p = parse(
      "mx[m] = max(n, x[m, n])\n"
      "lse[m] = mx[m] + log(sum(n, exp(x[m, n] - mx[m])))\n"
      "loss = sum(m, lse[m] - x[m, t[m]]) / M\n",
      rows({{"x", Role::input, DType::f64, {"M", "N"}},
            {"t", Role::input, DType::i64, {"M"}},
            {"mx", Role::temporary, DType::f64, {"M"}},
            {"lse", Role::temporary, DType::f64, {"M"}},
            {"loss", Role::output, DType::f64, {}}}));
  const std::vector<double> x = random_values(kM * kN, 8);
  const std::vector<double> t = {0, 6, 3, 3, 1};
  const Tensors in = {{"x", Buffer::of(DType::f64, {kM, kN}, x)},
                      {"t", Buffer::of(DType::i64, {kM}, t)}};
  const Tensors out = evaluate(p, {{"M", kM}, {"N", kN}}, in);
  double loss = 0.0;
  for (std::int64_t m = 0; m < kM; ++m) {
    double mx = -INFINITY, s = 0.0;
    for (std::int64_t n = 0; n < kN; ++n) mx = std::max(mx, x[m * kN + n]);
    for (std::int64_t n = 0; n < kN; ++n) s += std::exp(x[m * kN + n] - mx);
    loss += mx + std::log(s) - x[m * kN + static_cast<std::int64_t>(t[m])];
  }
  check_close(values_of(out.at("loss")), {loss / kM});

  // A target outside [0, N): the error names the statement, the coordinate and the value.
  Tensors bad = in;
  bad.at("t").set(2, 7);
  CHECK_THROWS_WITH_AS(evaluate(p, {{"M", kM}, {"N", kN}}, bad),
                       doctest::Contains("line 3 `loss = sum(m, lse[m] - x[m, t[m]]) / M`: "
                                         "subscript 2 of 'x' is 7 (a gather through 't'), "
                                         "outside [0, 7)"),
                       EvalError);
}

TEST_CASE("a 2-D view through index arithmetic") {
  Declarations d;
  d.dims = {{"G", DimKind::free}, {"CG", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f32, {"G", "CG"}},
               {"y", Role::output, DType::f32, {"CG", "G"}},
               {"z", Role::output, DType::f32, {"G", "CG"}}};
  const Program p = parse(
      "y[j, g] = x[g, j]\n"
      "z[g, j] = x[G - 1 - g, CG - 1 - j] + x[g, 0] * 0\n",
      d);
  const std::vector<double> x = {0, 1, 2, 3, 4, 5};  // 2 x 3
  const Tensors out =
      evaluate(p, {{"G", 2}, {"CG", 3}}, {{"x", Buffer::of(DType::f32, {2, 3}, x)}});
  CHECK(values_of(out.at("y")) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(values_of(out.at("z")) == std::vector<double>{5, 4, 3, 2, 1, 0});
}

// Subscripts are folded once an instance to c + sum(k * index) (instance.hpp's AffineIndex):
// a strided, dilated, padded window, an index met twice, negations and the dims; a product of
// two indices is walked node by node. The values: loops written here.
TEST_CASE("index arithmetic folded or walked: the loops' values") {
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"L", DimKind::free}, {"J", DimKind::free}};
  TensorDecl x{"x", Role::input, DType::f32, {"L"}};
  x.pad = 0.0;
  d.tensors = {
      x, {"y", Role::output, DType::f32, {"M"}}, {"z", Role::output, DType::f32, {"M", "J"}}};
  const Program p = parse(
      "y[i] = sum((q : 3), x[2 * i + 3 * q - 1]) + x[(i + 1) * 2 - i - 2] * 10"
      " + x[-(0 - i) + L - M] * 100 + x[2 * (M - 1 - i)] * 1000\n"
      "z[i, j] = x[i * j] + x[j * 2 * i + 1]\n",
      d);
  constexpr std::int64_t m = 6, l = 2 * m + 5, jn = 2;
  std::vector<double> xv = random_values(l, 11);
  for (double& v : xv) v = static_cast<float>(v);  // what an f32 buffer holds
  auto at = [&](std::int64_t k) { return k >= 0 && k < l ? xv[static_cast<std::size_t>(k)] : 0.0; };
  const DimValues dims = {{"M", m}, {"L", l}, {"J", jn}};
  const Tensors in = {{"x", Buffer::of(DType::f32, {l}, xv)}};
  const Tensors out = evaluate(p, dims, in);
  std::vector<double> y, z;
  for (std::int64_t i = 0; i < m; ++i) {
    double s = 0;
    for (std::int64_t q = 0; q < 3; ++q) s += at(2 * i + 3 * q - 1);
    y.push_back(
        static_cast<float>(s + at(i) * 10 + at(i + l - m) * 100 + at(2 * (m - 1 - i)) * 1000));
    for (std::int64_t j = 0; j < jn; ++j)
      z.push_back(static_cast<float>(at(i * j) + at(2 * i * j + 1)));
  }
  check_close(values_of(out.at("y")), y);
  check_close(values_of(out.at("z")), z);

  // Which subscripts were folded: every one of y's, none of z's (each holds a product of two
  // indices).
  const Instance inst = make_instance(p, dims, in);
  std::vector<bool> folded;
  for (const Node& n : p.nodes)
    if (n.kind == NodeKind::access)
      for (int a : n.args) folded.push_back(inst.affine[static_cast<std::size_t>(a)].ok);
  CHECK(folded == std::vector<bool>{true, true, true, true, false, false});
}

TEST_CASE("outputs are rounded once to f16 and bf16; temporaries are not rounded") {
  Declarations d;
  d.dims = {{"N", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f64, {"N"}},
               {"t", Role::temporary, DType::f16, {"N"}},
               {"h", Role::output, DType::f16, {"N"}},
               {"b", Role::output, DType::bf16, {"N"}},
               {"back", Role::output, DType::f64, {"N"}}};
  const Program p = parse(
      "t[i] = x[i] / 3\n"
      "h[i] = t[i]\n"
      "b[i] = t[i] * 7\n"
      "back[i] = t[i] * 3\n",
      d);
  const std::vector<double> x = random_values(64, 9, -100.0, 100.0);
  const Tensors out = evaluate(p, {{"N", 64}}, {{"x", Buffer::of(DType::f64, {64}, x)}});
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = x[i] / 3;
    CHECK(out.at("h").get(static_cast<std::int64_t>(i)) == kq::round_to(kq::DType::f16, t));
    CHECK(out.at("b").get(static_cast<std::int64_t>(i)) == kq::round_to(kq::DType::bf16, t * 7));
    CHECK(out.at("back").get(static_cast<std::int64_t>(i)) == t * 3);  // t kept in float64
  }
}

TEST_CASE("sums are compensated: 1 + 2^20 terms of 2^-60 is 1 + 2^-40 exactly") {
  Declarations d;
  d.dims = {{"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f64, {"N"}},
               {"total", Role::output, DType::f64, {}},
               {"running", Role::output, DType::f64, {"N"}}};
  const Program p = parse(
      "total = sum(n, x[n])\n"
      "running[n] = cumsum(n, x[n])\n",
      d);
  const std::int64_t n = (std::int64_t{1} << 20) + 1;
  std::vector<double> x(static_cast<std::size_t>(n), std::ldexp(1.0, -60));
  x[0] = 1.0;
  double plain = 0.0;
  for (double v : x) plain += v;
  CHECK(plain == 1.0);  // every small term is lost in a plain sum
  const Tensors out = evaluate(p, {{"N", n}}, {{"x", Buffer::of(DType::f64, {n}, x)}});
  CHECK(out.at("total").get(0) == 1.0 + std::ldexp(1.0, -40));
  CHECK(out.at("running").get(n - 1) == 1.0 + std::ldexp(1.0, -40));
  // Cancellation: 1e16 + 1 - 1e16 is 1, not 0.
  const std::vector<double> c = {1e16, 1.0, -1e16};
  CHECK(evaluate(p, {{"N", 3}}, {{"x", Buffer::of(DType::f64, {3}, c)}}).at("total").get(0) == 1.0);
}

namespace {

// Softmax with its temporaries, a scan, a gather and a multi-index reduction: most paths.
struct Mixed {
  Program program;
  DimValues dims;
  Tensors inputs;
};

Mixed mixed(std::int64_t m, std::int64_t n) {
  Mixed x;
  x.program = parse(
      "mx[i] = max(j, x[i, j])\n"
      "s[i] = sum(j, exp(x[i, j] - mx[i]))\n"
      "y[i, j] = exp(x[i, j] - mx[i]) / s[i]\n"
      "c[i, j] = cumsum(j, y[i, j] * x[i, j], reverse) + x[i, t[i]]\n"
      "a[i] = argmax(j, x[i, j])\n"
      "total = sum((i, j), x[i, j] * x[i, j])\n",
      rows({{"x", Role::input, DType::f32, {"M", "N"}},
            {"t", Role::input, DType::i32, {"M"}},
            {"mx", Role::temporary, DType::f32, {"M"}},
            {"s", Role::temporary, DType::f32, {"M"}},
            {"y", Role::output, DType::bf16, {"M", "N"}},
            {"c", Role::output, DType::f32, {"M", "N"}},
            {"a", Role::output, DType::i64, {"M"}},
            {"total", Role::output, DType::f32, {}}}));
  x.dims = {{"M", m}, {"N", n}};
  std::vector<double> t(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i)
    t[static_cast<std::size_t>(i)] = static_cast<double>((i * 7) % n);
  x.inputs = {
      {"x", Buffer::of(DType::f32, {m, n}, random_values(static_cast<std::size_t>(m * n), 10))},
      {"t", Buffer::of(DType::i32, {m}, t)}};
  return x;
}

}  // namespace

TEST_CASE("sampled evaluation equals the full evaluation at those coordinates") {
  const Mixed x = mixed(37, 300);
  const Tensors full = evaluate(x.program, x.dims, x.inputs);
  std::vector<Sample> samples = {{"y", {0, 0}},    {"y", {36, 299}}, {"c", {0, 0}}, {"c", {5, 150}},
                                 {"c", {36, 299}}, {"a", {17}},      {"total", {}}};
  std::mt19937 rng(11);
  for (int k = 0; k < 400; ++k)  // many runs of samples, walked in parallel
    samples.push_back(
        {k % 2 ? "y" : "c",
         {static_cast<std::int64_t>(rng() % 37), static_cast<std::int64_t>(rng() % 300)}});
  const std::vector<double> got = evaluate_at(x.program, x.dims, x.inputs, samples);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const Buffer& b = full.at(samples[k].output);
    std::int64_t linear = 0;
    for (std::size_t d = 0; d < samples[k].coord.size(); ++d)
      linear = linear * b.shape[d] + samples[k].coord[d];
    INFO("sample ", k, " of ", samples[k].output);
    CHECK(std::bit_cast<std::uint64_t>(got[k]) == std::bit_cast<std::uint64_t>(b.get(linear)));
  }
}

TEST_CASE("results do not depend on the number of threads") {
  const Mixed x = mixed(300, 1000);
  Tensors one, many;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = evaluate(x.program, x.dims, x.inputs);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    many = evaluate(x.program, x.dims, x.inputs);
  }
  check_bitwise(one, many);
  // The sampled walk too, its bounds included: runs of samples go to different threads.
  std::vector<Sample> samples;
  for (std::int64_t k = 0; k < 600; ++k)
    samples.push_back({"c", {(k * 37) % 300, (k * 101) % 1000}});
  SampledEvaluation a, b;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    a = evaluate_at_with_bounds(x.program, x.dims, x.inputs, samples);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    b = evaluate_at_with_bounds(x.program, x.dims, x.inputs, samples);
  }
  REQUIRE(a.values.size() == samples.size());
  CHECK(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0);
  CHECK(std::memcmp(a.bounds.data(), b.bounds.data(), a.bounds.size() * sizeof(double)) == 0);
}

TEST_CASE("evaluation errors: missing dims and inputs, bad shapes, unrepresentable outputs") {
  const Mixed x = mixed(4, 5);
  CHECK_THROWS_WITH_AS(evaluate(x.program, {{"M", 4}}, x.inputs),
                       doctest::Contains("no value for dim 'N'"), EvalError);
  CHECK_THROWS_WITH_AS(evaluate(x.program, {{"M", 4}, {"N", 6}}, x.inputs),
                       doctest::Contains("input 'x' has shape [4, 6]"), EvalError);
  Declarations d;
  d.dims = {{"N", DimKind::free}};
  d.tensors = {{"x", Role::input, DType::f32, {"N"}}, {"k", Role::output, DType::i32, {"N"}}};
  const Program p = parse("k[i] = x[i] / 2", d);
  CHECK_THROWS_WITH_AS(
      evaluate(p, {{"N", 2}}, {{"x", Buffer::of(DType::f32, {2}, std::vector<double>{2, 3})}}),
      doctest::Contains("output 'k' at [1] is 1.5"), EvalError);
}

TEST_CASE("long reductions run in chunks: the loops' values, the same bits at any thread count") {
  // Three chunks and a tail of kReduceChunk terms per reduction, with ties and a NaN across
  // chunk boundaries; f64 outputs, so that the comparison sees the reference's own digits.
  constexpr std::int64_t kN = 3 * kReduceChunk + 123;
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f64, {"M", "N"}},
               {"s", Role::output, DType::f64, {}},
               {"p", Role::output, DType::f64, {"M"}},
               {"hi", Role::output, DType::f64, {"M"}},
               {"at", Role::output, DType::i64, {"M"}}};
  const Program prog = parse(
      "s = sum((m, n), x[m, n] * x[m, n] - 1)\n"
      "p[m] = prod(n, 1 + x[m, n] / 1048576)\n"
      "hi[m] = max(n, x[m, n])\n"
      "at[m] = argmax(n, x[m, n])\n",
      d);
  std::vector<double> x = random_values(static_cast<std::size_t>(2 * kN), 21);
  x[kReduceChunk + 5] = x[2 * kReduceChunk + 7] = 9.0;  // row 0: a tie across chunks
  x[kN + 3 * kReduceChunk + 1] = kNaN;                  // row 1: a NaN in the tail
  x[kN + 10] = 9.0;
  const Tensors inputs = {{"x", Buffer::of(DType::f64, {2, kN}, x)}};
  const DimValues dims = {{"M", 2}, {"N", kN}};

  Tensors one, many;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = evaluate(prog, dims, inputs);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    many = evaluate(prog, dims, inputs);
  }
  check_bitwise(one, many);

  double p = 1.0;
  for (std::int64_t k = 0; k < kN; ++k) p *= 1 + x[static_cast<std::size_t>(k)] / 1048576;
  CHECK(std::isnan(values_of(many.at("s"))[0]));  // the NaN reaches the whole sum
  check_close({values_of(many.at("p"))[0]}, {p});
  CHECK(values_of(many.at("hi"))[0] == 9.0);
  CHECK(std::isnan(values_of(many.at("hi"))[1]));
  CHECK(values_of(many.at("at")) == std::vector<double>{kReduceChunk + 5, 3 * kReduceChunk + 1});

  // Without the NaN the sum is the loop's.
  x[kN + 3 * kReduceChunk + 1] = 0.5;
  const Tensors clean_inputs = {{"x", Buffer::of(DType::f64, {2, kN}, x)}};
  const Tensors clean = evaluate(prog, dims, clean_inputs);
  double want = 0.0;
  for (double v : x) want += v * v - 1;
  check_close(values_of(clean.at("s")), {want});
  CHECK(values_of(clean.at("at"))[1] == 10);

  // The sampled walk (its chunks side by side too) gives the same bits.
  const std::vector<Sample> samples = {{"s", {}}, {"p", {0}}, {"hi", {1}}, {"at", {0}}};
  const std::vector<double> got = evaluate_at(prog, dims, clean_inputs, samples, 0);
  CHECK(std::bit_cast<std::uint64_t>(got[0]) ==
        std::bit_cast<std::uint64_t>(values_of(clean.at("s"))[0]));
  CHECK(std::bit_cast<std::uint64_t>(got[1]) ==
        std::bit_cast<std::uint64_t>(values_of(clean.at("p"))[0]));
  CHECK(got[2] == values_of(clean.at("hi"))[1]);
  CHECK(got[3] == values_of(clean.at("at"))[0]);
}

TEST_CASE("a sampled loss through temporaries: its chunks side by side, the full walk's bits") {
  // z and r are computed on demand (no eager tensors) and remembered by each thread on its own
  // while the loss's chunks run side by side; each term reads z three times and r once.
  constexpr std::int64_t kN = 5 * kReduceChunk + 17;
  Declarations d;
  d.dims = {{"M", DimKind::reduced}, {"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f64, {"M", "N"}},
               {"z", Role::temporary, DType::f64, {"M", "N"}},
               {"r", Role::temporary, DType::f64, {"M"}},
               {"loss", Role::output, DType::f64, {}}};
  const Program prog = parse(
      "z[m, n] = abs(x[m, n] - 0.25)\n"
      "r[m] = max(n, x[m, n])\n"
      "loss = sum((m, n), select(z[m, n] < 0.5, z[m, n] * z[m, n], z[m, n] - r[m])) / 3\n",
      d);
  const Tensors inputs = {
      {"x", Buffer::of(DType::f64, {3, kN}, random_values(static_cast<std::size_t>(3 * kN), 5))}};
  const DimValues dims = {{"M", 3}, {"N", kN}};
  const double full = values_of(evaluate(prog, dims, inputs).at("loss"))[0];
  double want = 0.0;  // the loop's, for the value; the bits are the full walk's
  const std::vector<double> x = values_of(inputs.at("x"));
  for (std::int64_t m = 0; m < 3; ++m) {
    double r = x[static_cast<std::size_t>(m * kN)];
    for (std::int64_t n = 0; n < kN; ++n) r = std::max(r, x[static_cast<std::size_t>(m * kN + n)]);
    for (std::int64_t n = 0; n < kN; ++n) {
      const double z = std::abs(x[static_cast<std::size_t>(m * kN + n)] - 0.25);
      want += z < 0.5 ? z * z : z - r;
    }
  }
  check_close({full}, {want / 3});
  for (const int threads : {1, 4}) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
    const std::vector<Sample> samples = {{"loss", {}}};
    const std::vector<double> got = evaluate_at(prog, dims, inputs, samples, 0);
    CHECK(std::bit_cast<std::uint64_t>(got[0]) == std::bit_cast<std::uint64_t>(full));
    const SampledEvaluation b = evaluate_at_with_bounds(prog, dims, inputs, samples, 0);
    CHECK(std::bit_cast<std::uint64_t>(b.values[0]) == std::bit_cast<std::uint64_t>(full));
    CHECK(b.bounds[0] > 0.0);
  }
}

TEST_CASE("outputs and bounds placed in the caller's memory: the same bits") {
  // mean is read by later statements (rounded at the end), y by none (rounded as computed), c is
  // a matrix product (the compiled contraction); inputs borrowed in place.
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::free}, {"K", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f32, {"M", "K"}},
               {"w", Role::input, DType::f32, {"K", "N"}},
               {"mean", Role::output, DType::f32, {"M"}},
               {"y", Role::output, DType::bf16, {"M", "K"}},
               {"c", Role::output, DType::f32, {"M", "N"}}};
  const Program p = parse(
      "mean[m] = sum(k, x[m, k]) / K\n"
      "y[m, k] = x[m, k] - mean[m]\n"
      "c[m, n] = sum(k, x[m, k] * w[k, n])\n",
      d);
  const DimValues dims = {{"M", 37}, {"N", 5}, {"K", 131}};
  const std::vector<double> x = random_values(37 * 131, 11), w = random_values(131 * 5, 12);
  const Tensors owned = {{"x", Buffer::of(DType::f32, {37, 131}, x)},
                         {"w", Buffer::of(DType::f32, {131, 5}, w)}};
  const Tensors borrowed = {{"x", Buffer::borrow(DType::f32, {37, 131}, owned.at("x").data())},
                            {"w", Buffer::borrow(DType::f32, {131, 5}, owned.at("w").data())}};
  const std::vector<int> bounded = {2, 3, 4};  // mean, y, c
  const Evaluation want = evaluate_with_bounds(p, dims, owned, bounded);
  std::vector<unsigned char> mean(37 * 4, 0xAB), y(37 * 131 * 2, 0xAB), c(37 * 5 * 4, 0xAB);
  std::vector<double> mean_e(37, -1), y_e(37 * 131, -1), c_e(37 * 5, -1);
  const Places places = {{"mean", mean.data()}, {"y", y.data()}, {"c", c.data()}};
  const Places bound_places = {{"mean", mean_e.data()}, {"y", y_e.data()}, {"c", c_e.data()}};
  const Evaluation e = evaluate_with_bounds(p, dims, borrowed, bounded, places, bound_places);
  for (const auto& [name, memory] : places) {
    INFO(name);
    const Buffer& b = e.outputs.at(name);
    CHECK(b.data() == memory);
    CHECK(b.bytes.empty());
    const Buffer& w = want.outputs.at(name);
    CHECK(std::memcmp(memory, w.bytes.data(), w.bytes.size()) == 0);
    const Buffer& eb = e.bounds.at(name);
    CHECK(eb.data() == bound_places.at(name));
    const Buffer& wb = want.bounds.at(name);
    CHECK(std::memcmp(eb.data(), wb.bytes.data(), wb.bytes.size()) == 0);
  }
}
