// Padded inputs (`pad:`): a read outside the input gives its pad, as a padded pooling or
// convolution reads. The reference against loops written here (both walks, and at samples), the
// range check that no longer refuses such reads, the spec's errors, the canonical form, and the
// integer value class (a pad that is not an integer makes the output inexact).
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

std::string spec_error(const std::string& inputs) {
  const std::string text = "kq_spec: 2\nop: w\ndims: {M: free, N: free}\ninputs: " + inputs +
                           "\noutputs: {y: {dtype: f32, shape: [M, N]}}\n"
                           "semantics: |\n  y[m, n] = x[m, n - 1]\ncompare: {y: {ulp: 1}}\n"
                           "timing: {points: [{M: 2, N: 3}]}\ndecision: {baseline: cpu_tbb}\n";
  try {
    kq::parse_spec(text, "w.yaml");
  } catch (const kq::SpecError& e) {
    return e.what();
  }
  return "";
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
  std::string why;
  try {
    kq::parse_spec(out, "w.yaml");
  } catch (const kq::SpecError& e) {
    why = e.what();
  }
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
