// The accumulation bound: the reference's running error bound E against hand-computed values
// (sums that cancel, scans, divisions, a mean, products, max, functions, temporaries); the
// comparison by it (c u E plus one ulp of the output); kernels that sum random data in float32
// within it and in bfloat16 outside it; and the case data of a spec that asks for it.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "indexed/evaluate.hpp"
#include "indexed/machine.hpp"  // kReduceChunk
#include "indexed/parser.hpp"
#include "kq/half.hpp"
#include "plan/case_shapes.hpp"
#include "plan/plan_cases.hpp"
#include "qualify/case_data.hpp"
#include "qualify/compare.hpp"
#include "spec/spec.hpp"

namespace {

using namespace kq::ix;
using kq::DType;

Program parse(std::string_view text, const Declarations& d) {
  ParseResult r = parse_program(text, d);
  INFO("error: ", r.error ? r.error->text() : "");
  REQUIRE(r.program.has_value());
  return *r.program;
}

std::vector<double> values_of(const Buffer& b) {
  std::vector<double> v(static_cast<std::size_t>(b.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = b.get(static_cast<std::int64_t>(i));
  return v;
}

// The positions of the outputs in the declarations.
std::vector<int> outputs_of(const Program& p) {
  std::vector<int> out;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (p.decls.tensors[t].role == Role::output) out.push_back(static_cast<int>(t));
  return out;
}

// Output `name`'s bounds.
std::vector<double> bounds(const Program& p, const DimValues& dims, const Tensors& inputs,
                           const std::string& name) {
  const std::vector<int> outputs = outputs_of(p);
  const Tensors b = evaluate_bounds(p, dims, inputs, outputs);
  REQUIRE(b.count(name) == 1);
  CHECK(b.at(name).dtype == DType::f64);
  return values_of(b.at(name));
}

void check_equal(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i, ": got ", got[i], ", want ", want[i]);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-13));
  }
}

// One row of N f64 inputs x (and w of the same shape), M = 1.
Declarations row(std::vector<TensorDecl> outputs) {
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f64, {"M", "N"}}, {"w", Role::input, DType::f64, {"M"}}};
  for (TensorDecl& t : outputs) d.tensors.push_back(std::move(t));
  return d;
}

Tensors row_inputs(const std::vector<double>& x, const std::vector<double>& w = {1.0}) {
  Tensors in;
  in["x"] = Buffer::of(DType::f64, {1, static_cast<std::int64_t>(x.size())}, x);
  in["w"] = Buffer::of(DType::f64, {1}, w);
  return in;
}

DimValues row_dims(std::size_t n) { return {{"M", 1}, {"N", static_cast<std::int64_t>(n)}}; }

}  // namespace

TEST_CASE("a sum that cancels: the bound is sqrt(K) times the magnitudes of its terms") {
  const Program p = parse("y[m] = sum(n, x[m, n])", row({{"y", Role::output, DType::f32, {"M"}}}));
  const std::vector<double> x = {1.0, -1.0, 1e8, -1e8, 3.0};
  const Tensors in = row_inputs(x);
  const Evaluation e = evaluate_with_bounds(p, row_dims(x.size()), in, outputs_of(p));
  CHECK(e.outputs.at("y").get(0) == 3.0);
  check_equal(values_of(e.bounds.at("y")), {std::sqrt(5.0) * (2e8 + 5.0)});
  // The values are evaluate()'s, bit for bit.
  CHECK(e.outputs.at("y").bytes == evaluate(p, row_dims(x.size()), in).at("y").bytes);
}

TEST_CASE("cumsum: the sum's bound over each prefix, suffix, or the terms before") {
  const std::vector<double> x = {1.0, 2.0, -3.0, 4.0};
  const std::vector<double> mag = {1.0, 3.0, 6.0, 10.0};  // prefix sums of |x|
  const auto shape = TensorDecl{"y", Role::output, DType::f32, {"M", "N"}};
  const Program inclusive = parse("y[m, n] = cumsum(n, x[m, n])", row({shape}));
  check_equal(bounds(inclusive, row_dims(4), row_inputs(x), "y"),
              {mag[0], std::sqrt(2.0) * mag[1], std::sqrt(3.0) * mag[2], 2.0 * mag[3]});
  const Program exclusive = parse("y[m, n] = cumsum(n, x[m, n], exclusive)", row({shape}));
  check_equal(bounds(exclusive, row_dims(4), row_inputs(x), "y"),
              {0.0, mag[0], std::sqrt(2.0) * mag[1], std::sqrt(3.0) * mag[2]});
  // Suffixes: |4| = 4, |-3| + 4 = 7, 9, 10.
  const Program reverse = parse("y[m, n] = cumsum(n, x[m, n], reverse)", row({shape}));
  check_equal(bounds(reverse, row_dims(4), row_inputs(x), "y"),
              {2.0 * 10.0, std::sqrt(3.0) * 9.0, std::sqrt(2.0) * 7.0, 4.0});
  // cumprod of 1, 2, -3, 4: products 1, 2, -6, -24; exact terms, so K |v| alone.
  const Program cumprod = parse("y[m, n] = cumprod(n, x[m, n])", row({shape}));
  check_equal(bounds(cumprod, row_dims(4), row_inputs(x), "y"), {1.0, 4.0, 18.0, 96.0});
  // A scan's bound is also what a scan inside an expression (the element-wise path) reads.
  const Program scaled = parse("y[m, n] = 2 * cumsum(n, x[m, n])", row({shape}));
  check_equal(bounds(scaled, row_dims(4), row_inputs(x), "y"),
              {2.0 * mag[0] + 2.0, 2.0 * std::sqrt(2.0) * mag[1] + 6.0,
               2.0 * std::sqrt(3.0) * mag[2] + 0.0, 4.0 * mag[3] + 8.0});
}

TEST_CASE("a division, a product and a mean") {
  const std::vector<double> x = {3.0, -1.0, 6.0};
  const auto y = TensorDecl{"y", Role::output, DType::f32, {"M"}};
  // (x0 + x1) / w: the sum rounds once (E = |2|), the quotient once more: 2 / 4 + 0.5.
  const Program div = parse("y[m] = (x[m, 0] + x[m, 1]) / w[m]", row({y}));
  check_equal(bounds(div, row_dims(3), row_inputs(x, {4.0}), "y"), {1.0});
  // Dividing by an exact zero bounds nothing.
  CHECK(std::isinf(bounds(div, row_dims(3), row_inputs(x, {0.0}), "y")[0]));
  // (x0 + x1) * (x0 + x2) = 2 * 9: |9| 2 + |2| 9 + 18.
  const Program mul = parse("y[m] = (x[m, 0] + x[m, 1]) * (x[m, 0] + x[m, 2])", row({y}));
  check_equal(bounds(mul, row_dims(3), row_inputs(x), "y"), {54.0});
  // The mean: the sum's bound sqrt(3) 10, divided by N = 3, plus the quotient's |8 / 3|.
  const Program mean = parse("y[m] = sum(n, x[m, n]) / N", row({y}));
  check_equal(bounds(mean, row_dims(3), row_inputs(x), "y"),
              {std::sqrt(3.0) * 10.0 / 3.0 + 8.0 / 3.0});
  // prod of 3, -1, 6 = -18, exact terms: 3 |v|; max of x + 1 is 7, with the bound of 6 + 1.
  const Program prod = parse("y[m] = prod(n, x[m, n])", row({y}));
  check_equal(bounds(prod, row_dims(3), row_inputs(x), "y"), {54.0});
  const Program max = parse("y[m] = max(n, x[m, n] + 1)", row({y}));
  check_equal(bounds(max, row_dims(3), row_inputs(x), "y"), {7.0});
}

TEST_CASE("functions, selections, comparisons and temporaries") {
  const std::vector<double> x = {0.5, -2.0, 0.0};
  const auto y = TensorDecl{"y", Role::output, DType::f32, {"M"}};
  // exp of an exact input: its rounding alone; of a sum: |v| Ea + |v|.
  const Program e1 = parse("y[m] = exp(x[m, 0])", row({y}));
  check_equal(bounds(e1, row_dims(3), row_inputs(x), "y"), {std::exp(0.5)});
  const Program e2 = parse("y[m] = exp(x[m, 0] + x[m, 1])", row({y}));
  check_equal(bounds(e2, row_dims(3), row_inputs(x), "y"), {std::exp(-1.5) * 1.5 + std::exp(-1.5)});
  // log(x0 - x1) = log 2.5: E = 2.5 / 2.5 + log 2.5; sqrt(x0 - x1): 2.5 / (2 sqrt 2.5) + sqrt 2.5.
  const Program lg = parse("y[m] = log(x[m, 0] - x[m, 1])", row({y}));
  check_equal(bounds(lg, row_dims(3), row_inputs(x), "y"), {1.0 + std::log(2.5)});
  const Program sq = parse("y[m] = sqrt(x[m, 0] - x[m, 1])", row({y}));
  check_equal(bounds(sq, row_dims(3), row_inputs(x), "y"),
              {2.5 / (2.0 * std::sqrt(2.5)) + std::sqrt(2.5)});
  // The branch not taken (0 log 0: NaN, and so its bound) leaves no trace.
  const Program l0 = parse("y[m] = select(x[m, 2] == 0, 0, x[m, 2] * log(x[m, 2]))", row({y}));
  check_equal(bounds(l0, row_dims(3), row_inputs(x), "y"), {0.0});
  // select takes its chosen branch's bound; a comparison has none; tanh has L = 1.
  const Program sel = parse("y[m] = select(x[m, 0] > 0, x[m, 0] + x[m, 1], x[m, 0])", row({y}));
  check_equal(bounds(sel, row_dims(3), row_inputs(x), "y"), {1.5});
  const Program th = parse("y[m] = tanh(x[m, 0] + x[m, 1])", row({y}));
  check_equal(bounds(th, row_dims(3), row_inputs(x), "y"), {1.5 + std::tanh(1.5)});
  // A temporary's bound flows into what reads it: s = sum (sqrt 3 * 2.5), then 2 s + |2 s|.
  Declarations d = row({y});
  d.tensors.push_back({"s", Role::temporary, DType::f64, {"M"}});
  const Program tmp = parse("s[m] = sum(n, x[m, n])\ny[m] = s[m] * 2", d);
  check_equal(bounds(tmp, row_dims(3), row_inputs(x), "y"), {2.0 * std::sqrt(3.0) * 2.5 + 3.0});
}

TEST_CASE("only outputs have bounds; an output not asked has none") {
  Declarations d =
      row({{"y", Role::output, DType::f32, {"M"}}, {"z", Role::output, DType::f32, {"M"}}});
  const Program p = parse("y[m] = sum(n, x[m, n])\nz[m] = max(n, x[m, n])", d);
  const int first_output = outputs_of(p)[0];
  const Tensors b = evaluate_bounds(p, row_dims(2), row_inputs({1.0, 2.0}), {&first_output, 1});
  CHECK(b.size() == 1);
  CHECK(b.count(p.decls.tensors[static_cast<std::size_t>(first_output)].name) == 1);
  const int input = 0;
  CHECK_THROWS_AS(evaluate_bounds(p, row_dims(2), row_inputs({1.0, 2.0}), {&input, 1}), EvalError);
}

TEST_CASE("the comparison by the bound: c u E, plus one ulp of the output at want") {
  CHECK(kq::ulp_at(DType::f32, std::bit_cast<std::uint32_t>(1.0f)) == std::ldexp(1.0, -23));
  CHECK(kq::ulp_at(DType::f32, std::bit_cast<std::uint32_t>(-1.0f)) == std::ldexp(1.0, -23));
  CHECK(kq::ulp_at(DType::f16, 0) == std::ldexp(1.0, -24));
  CHECK(kq::ulp_at(DType::f32, std::bit_cast<std::uint32_t>(3.4028234663852886e38f)) ==
        std::ldexp(1.0, 104));
  kq::OutputRule rule;
  rule.bound_scale = kq::kAccumulationBoundFactor * kq::unit_roundoff(DType::f32);
  const auto bits = [](float f) { return std::uint64_t{std::bit_cast<std::uint32_t>(f)}; };
  const float one = 1.0f, next = std::nextafter(1.0f, 2.0f);
  const float two_up = std::nextafter(next, 2.0f);
  // With no bound, one ulp passes and two fail; a bound of E = 1 (2u = one ulp) lets two pass.
  CHECK(kq::element_matches(rule, DType::f32, 0.0, bits(one), bits(next)));
  CHECK_FALSE(kq::element_matches(rule, DType::f32, 0.0, bits(one), bits(two_up)));
  CHECK(kq::element_matches(rule, DType::f32, 1.0, bits(one), bits(two_up)));
  // Near a cancellation the bound is absolute: 1e-3 off 0 passes under E = 2^20.
  CHECK(kq::element_matches(rule, DType::f32, std::ldexp(1.0, 20), bits(0.0f), bits(1e-3f)));
  CHECK_FALSE(kq::element_matches(rule, DType::f32, 1.0, bits(0.0f), bits(1e-3f)));
  // NaN only for NaN, infinities only for the same one, whatever the bound.
  const float inf = INFINITY, nan = NAN;
  CHECK_FALSE(kq::element_matches(rule, DType::f32, INFINITY, bits(one), bits(inf)));
  CHECK_FALSE(kq::element_matches(rule, DType::f32, INFINITY, bits(one), bits(nan)));
  CHECK(kq::element_matches(rule, DType::f32, 0.0, bits(nan), bits(-nan)));
  // Other rules ignore the bound.
  const kq::OutputRule bitwise{kq::CompareRule{}};
  CHECK_FALSE(kq::element_matches(bitwise, DType::f32, 1e30, bits(one), bits(next)));
}

namespace {

// a + b rounded once to bfloat16.
float add_bf16(float a, float b) {
  return static_cast<float>(kq::BFloat16(static_cast<double>(a) + static_cast<double>(b)));
}

}  // namespace

TEST_CASE("float32 sums of random data stay within the bound; bfloat16 sums do not") {
  constexpr std::int64_t kM = 64, kN = 4099;
  Declarations d;
  d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f32, {"M", "N"}},
               {"y", Role::output, DType::f32, {"M"}},
               {"c", Role::output, DType::f32, {"M", "N"}}};
  const Program p = parse("y[m] = sum(n, x[m, n])\nc[m, n] = cumsum(n, x[m, n])", d);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  std::vector<double> x(static_cast<std::size_t>(kM * kN));
  for (double& v : x) v = draw(rng);
  Tensors in;
  in["x"] = Buffer::of(DType::f32, {kM, kN}, x);
  const DimValues dims = {{"M", kM}, {"N", kN}};
  const Evaluation e = evaluate_with_bounds(p, dims, in, outputs_of(p));
  kq::OutputRule rule;
  rule.bound_scale = kq::kAccumulationBoundFactor * kq::unit_roundoff(DType::f32);
  const auto bits = [](float f) { return std::uint64_t{std::bit_cast<std::uint32_t>(f)}; };

  // Plain running sums, the least accurate order, once in float32 and once with every partial
  // sum rounded to bfloat16; each row's sum and its running prefix sums.
  int f32_bad = 0, bf16_bad = 0, f32_scan_bad = 0, bf16_scan_bad = 0;
  for (std::int64_t m = 0; m < kM; ++m) {
    float s32 = 0.0f, s16 = 0.0f;
    for (std::int64_t n = 0; n < kN; ++n) {
      const auto i = static_cast<std::size_t>(m * kN + n);
      s32 += static_cast<float>(x[i]);
      s16 = add_bf16(s16, static_cast<float>(x[i]));
      const auto want = bits(static_cast<float>(e.outputs.at("c").get(m * kN + n)));
      const double bound = e.bounds.at("c").get(m * kN + n);
      f32_scan_bad += !kq::element_matches(rule, DType::f32, bound, want, bits(s32));
      bf16_scan_bad += !kq::element_matches(rule, DType::f32, bound, want, bits(s16));
    }
    const auto want = bits(static_cast<float>(e.outputs.at("y").get(m)));
    const double bound = e.bounds.at("y").get(m);
    f32_bad += !kq::element_matches(rule, DType::f32, bound, want, bits(s32));
    bf16_bad += !kq::element_matches(rule, DType::f32, bound, want, bits(s16));
  }
  CHECK(f32_bad == 0);
  CHECK(f32_scan_bad == 0);
  CHECK(bf16_bad > kM / 2);
  CHECK(bf16_scan_bad > kM * kN / 2);
}

TEST_CASE("a spec's case data holds the bounds of the outputs compared by them") {
  const auto root = std::filesystem::path(KQ_SOURCE_DIR);
  const kq::Spec spec = kq::load_spec(root / "tests/data/specs_v2/cross_entropy.yaml");
  CHECK(kq::output_by_bound(spec, 0));
  kq::PlanOptions quick;
  quick.quick = true;
  int checked = 0;
  for (const kq::Case& c : kq::plan_cases(spec, quick)) {
    if (!c.in_contract || c.group != "point") continue;
    CAPTURE(c.name);
    const std::vector<kq::OutputRule> rules = kq::output_rules(spec, c);
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].bound_scale == 2.0 * std::ldexp(1.0, -24));
    CHECK_THROWS_AS(kq::compare_rules(spec, c), std::runtime_error);
    const kq::CaseDataLayout layout(spec, c);
    REQUIRE(layout.bound_bytes(0) == sizeof(double));  // the scalar loss
    std::vector<unsigned char> data(layout.total_bytes());
    kq::compute_case_data(spec, c, layout, data.data());
    for (int g = 0; g < kq::kGenerations; ++g) {
      double bound = 0.0;
      std::memcpy(&bound, data.data() + layout.bound_offset(g, 0), sizeof bound);
      CHECK(std::isfinite(bound));
      CHECK(bound > 0.0);
    }
    ++checked;
  }
  CHECK(checked > 0);
  // A spec without the rule has no bounds.
  const kq::Spec softmax = kq::load_spec(root / "tests/data/specs_v2/softmax.yaml");
  CHECK_FALSE(kq::output_by_bound(softmax, 0));
  const auto cases = kq::plan_cases(softmax, quick);
  CHECK(kq::CaseDataLayout(softmax, cases.front()).bound_bytes(0) == 0);
}

// Alike terms round alike: a float32 running sum (one thread's FMA loop, the vendor's
// per-output accumulation) of a constant or of values on a large offset is off by up to about
// 0.16 sqrt(K) times sqrt(K) u sum |t_i| (40 times at K = 65536), beyond sqrt(K) growth; the
// running sums' part of the bound covers it, and a bfloat16 running sum still fails.
TEST_CASE("float32 running sums of alike terms stay within the bound; bfloat16 ones do not") {
  for (const std::int64_t kN : {std::int64_t{4097}, std::int64_t{65536}}) {
    constexpr std::int64_t kM = 4;
    Declarations d;
    d.dims = {{"M", DimKind::free}, {"N", DimKind::reduced}};
    d.tensors = {{"x", Role::input, DType::f32, {"M", "N"}},
                 {"y", Role::output, DType::f32, {"M"}}};
    const Program p = parse("y[m] = sum(n, x[m, n])", d);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> draw(0.0f, 1.0f);
    std::vector<double> x(static_cast<std::size_t>(kM * kN));
    for (std::int64_t n = 0; n < kN; ++n) {
      const auto at = [&](std::int64_t m) { return static_cast<std::size_t>(m * kN + n); };
      x[at(0)] = 0.1f;
      x[at(1)] = 1.0f / 3.0f;
      x[at(2)] = 1.0f + 0.01f * draw(rng);  // a large offset, a little noise
      x[at(3)] = -(100.0f + draw(rng));
    }
    Tensors in;
    in["x"] = Buffer::of(DType::f32, {kM, kN}, x);
    const Evaluation e = evaluate_with_bounds(p, {{"M", kM}, {"N", kN}}, in, outputs_of(p));
    kq::OutputRule rule;
    rule.bound_scale = kq::kAccumulationBoundFactor * kq::unit_roundoff(DType::f32);
    const auto bits = [](float f) { return std::uint64_t{std::bit_cast<std::uint32_t>(f)}; };
    for (std::int64_t m = 0; m < kM; ++m) {
      float s32 = 0.0f, s16 = 0.0f;
      for (std::int64_t n = 0; n < kN; ++n) {
        const auto xi = static_cast<float>(x[static_cast<std::size_t>(m * kN + n)]);
        s32 = std::fma(xi, 1.0f, s32);
        s16 = add_bf16(s16, xi);
      }
      INFO("K = ", kN, ", row ", m, ": float32 ", s32, ", bfloat16 ", s16, ", want ",
           e.outputs.at("y").get(m));
      const auto want = bits(static_cast<float>(e.outputs.at("y").get(m)));
      const double bound = e.bounds.at("y").get(m);
      CHECK(kq::element_matches(rule, DType::f32, bound, want, bits(s32)));
      CHECK_FALSE(kq::element_matches(rule, DType::f32, bound, want, bits(s16)));
    }
  }
}

TEST_CASE("a long sum's bound has the whole sum's running sums, in chunks or not") {
  // Alike terms: the running sums' part of the rule dominates, and a chunk's own running sums
  // (from 0) would give about a third of it.
  const std::int64_t n = 2 * kReduceChunk + 5;
  Declarations d;
  d.dims = {{"N", DimKind::reduced}};
  d.tensors = {{"x", Role::input, DType::f32, {"N"}}, {"s", Role::output, DType::f32, {}}};
  const Program p = parse("s = sum(n, x[n] + 10)", d);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& v : x) v = static_cast<float>(u(rng));
  double errors = 0.0, magnitudes = 0.0, running = 0.0, partials = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double t = x[k] + 10;
    errors += std::fabs(t);  // the addition's own rounding
    magnitudes += std::fabs(t);
    running += t;
    if (k > 0) partials += std::fabs(running);
  }
  const double want = errors + std::max(std::sqrt(static_cast<double>(n)) * magnitudes, partials);
  REQUIRE(partials > 2 * std::sqrt(static_cast<double>(n)) * magnitudes);
  const std::vector<double> got =
      bounds(p, {{"N", n}}, {{"x", Buffer::of(DType::f32, {n}, x)}}, "s");
  REQUIRE(got.size() == 1);
  CHECK(got[0] == doctest::Approx(want).epsilon(1e-12));
}
