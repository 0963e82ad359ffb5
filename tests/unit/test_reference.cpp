// The float64 reference: the value of every op, its IEEE edges, the single rounding to the output
// dtype, and eval_reference over every layout agreeing with eval_scalar.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "expr/parser.hpp"
#include "expr/reference.hpp"

namespace {

using kq::DType;
using kq::Expr;
using kq::TensorView;

const std::vector<std::string> kNames{"x", "y", "z"};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }
std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }

Expr parse(std::string_view text, const std::vector<std::string>& names = kNames) {
  auto r = kq::parse_expr(text, names);
  INFO("text: ", std::string(text), "  error: ", r.error ? r.error->message : "");
  REQUIRE(r.expr.has_value());
  return *r.expr;
}

double ev(std::string_view text, std::vector<double> inputs = {}) {
  inputs.resize(kNames.size(), 0.0);
  return kq::eval_scalar(parse(text), inputs);
}

// A view of `rank` extents and element strides over `data`.
TensorView view(void* data, DType t, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> strides) {
  TensorView v;
  v.data = data;
  v.dtype = t;
  v.rank = static_cast<int>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  return v;
}

TensorView dense(void* data, DType t, std::vector<std::int64_t> shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return view(data, t, shape, strides);
}

// Offset of row-major element `linear`, by division: independent of the evaluator's odometer.
std::int64_t offset_of(const TensorView& t, std::int64_t linear) {
  std::int64_t off = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    off += (linear % t.shape[d]) * t.strides[d];
    linear /= t.shape[d];
  }
  return off;
}

double read(const TensorView& t, std::int64_t linear) {
  const std::int64_t off = offset_of(t, linear);
  return t.dtype == DType::f32 ? static_cast<const float*>(t.data)[off]
                               : static_cast<const double*>(t.data)[off];
}

std::uint64_t read_bits(const TensorView& t, std::int64_t linear) {
  const std::int64_t off = offset_of(t, linear);
  return t.dtype == DType::f32 ? bits(static_cast<const float*>(t.data)[off])
                               : bits(static_cast<const double*>(t.data)[off]);
}

// Every element of `out` is eval_scalar of the inputs at the same index, rounded once to the
// output dtype: compared bit for bit. Returns the number of elements checked.
std::int64_t check_agrees(const Expr& e, const std::vector<TensorView>& inputs,
                          const TensorView& out) {
  std::int64_t bad = 0;
  std::vector<double> scalars(inputs.size());
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    for (std::size_t k = 0; k < inputs.size(); ++k) scalars[k] = read(inputs[k], i);
    const double want = kq::eval_scalar(e, scalars);
    const std::uint64_t want_bits =
        out.dtype == DType::f32 ? bits(static_cast<float>(want)) : bits(want);
    if (read_bits(out, i) != want_bits && bad++ < 5)
      FAIL_CHECK("element " << i << ": want " << want << " got " << read(out, i));
  }
  CHECK(bad == 0);
  return out.numel();
}

// Values that exercise the edges: signed zeros, infinities, NaN, subnormals, large magnitudes.
template <class T>
std::vector<T> values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  const T specials[] = {T(0),
                        -T(0),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::max(),
                        T(1)};
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = (rng() % 16 == 0) ? specials[rng() % 8] : static_cast<T>(normal(rng));
  return v;
}

void check_throws(const Expr& e, const std::vector<TensorView>& inputs, const TensorView& out,
                  const std::string& needle) {
  try {
    kq::eval_reference(e, inputs, out);
    FAIL_CHECK("no exception; wanted one saying: " << needle);
  } catch (const std::invalid_argument& ex) {
    const std::string what = ex.what();
    INFO("what(): ", what);
    CHECK(what.find(needle) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("arithmetic and comparisons") {
  CHECK(ev("x + y", {1.5, 2.25}) == 3.75);
  CHECK(ev("x - y", {7, 2}) == 5);
  CHECK(ev("x * y", {-3, 2.5}) == -7.5);
  CHECK(ev("x / y", {7, 2}) == 3.5);
  CHECK(ev("-x", {2}) == -2);
  CHECK(ev("1 / 0") == kInf);
  CHECK(ev("-1 / 0") == -kInf);
  CHECK(std::isnan(ev("0 / 0")));
  CHECK(std::isnan(ev("inf - inf")));
  CHECK(ev("1 < 2") == 1.0);
  CHECK(ev("2 < 1") == 0.0);
  CHECK(ev("1 <= 1") == 1.0);
  CHECK(ev("2 <= 1") == 0.0);
  CHECK(ev("2 > 1") == 1.0);
  CHECK(ev("1 > 1") == 0.0);
  CHECK(ev("1 >= 1") == 1.0);
  CHECK(ev("0 >= 1") == 0.0);
  CHECK(ev("1 == 1") == 1.0);
  CHECK(ev("1 == 2") == 0.0);
  CHECK(ev("1 != 2") == 1.0);
  CHECK(ev("1 != 1") == 0.0);
  CHECK(ev("x == y", {0.0, -0.0}) == 1.0);  // zeros are equal whatever their sign
}

TEST_CASE("every function at hand-computed points") {
  using doctest::Approx;
  CHECK(ev("relu(x)", {2.5}) == 2.5);
  CHECK(bits(ev("relu(x)", {-3})) == bits(0.0));
  CHECK(ev("relu(x)", {kInf}) == kInf);
  CHECK(bits(ev("relu(x)", {-kInf})) == bits(0.0));

  CHECK(ev("abs(x)", {-2.5}) == 2.5);
  CHECK(ev("abs(x)", {-kInf}) == kInf);

  CHECK(ev("exp(0)") == 1.0);
  CHECK(ev("exp(1)") == Approx(2.718281828459045).epsilon(1e-15));
  CHECK(ev("exp(-inf)") == 0.0);
  CHECK(ev("exp(1000)") == kInf);

  CHECK(ev("log(1)") == 0.0);
  CHECK(ev("log(10)") == Approx(2.302585092994046).epsilon(1e-15));
  CHECK(ev("log(0)") == -kInf);
  CHECK(std::isnan(ev("log(-1)")));

  CHECK(ev("sqrt(4)") == 2.0);
  CHECK(ev("sqrt(2)") == std::numbers::sqrt2);  // correctly rounded
  CHECK(bits(ev("sqrt(-0)")) == bits(-0.0));
  CHECK(std::isnan(ev("sqrt(-1)")));

  CHECK(ev("tanh(0)") == 0.0);
  CHECK(ev("tanh(1)") == Approx(0.7615941559557649).epsilon(1e-15));
  CHECK(ev("tanh(inf)") == 1.0);
  CHECK(ev("tanh(-inf)") == -1.0);

  CHECK(ev("sigmoid(0)") == 0.5);
  CHECK(ev("sigmoid(2)") == Approx(0.8807970779778823).epsilon(1e-15));
  CHECK(ev("sigmoid(inf)") == 1.0);
  CHECK(ev("sigmoid(-inf)") == 0.0);
  CHECK(ev("sigmoid(-1000)") == 0.0);  // exp(1000) overflows to inf, 1/inf = 0

  CHECK(ev("erf(0)") == 0.0);
  CHECK(ev("erf(1)") == Approx(0.8427007929497149).epsilon(1e-15));
  CHECK(ev("erf(inf)") == 1.0);
  CHECK(ev("erf(-inf)") == -1.0);

  CHECK(ev("gelu(0)") == 0.0);
  CHECK(ev("gelu(1)") == Approx(0.8413447460685429).epsilon(1e-15));  // Phi(1)
  CHECK(ev("gelu(-1)") == Approx(-0.15865525393145707).epsilon(1e-15));
  CHECK(ev("gelu(inf)") == kInf);
  CHECK(std::isnan(ev("gelu(-inf)")));  // -inf * 0, as the formula says

  CHECK(ev("silu(0)") == 0.0);
  CHECK(ev("silu(1)") == Approx(0.7310585786300049).epsilon(1e-15));
  CHECK(ev("silu(-1)") == Approx(-0.2689414213699951).epsilon(1e-15));
  CHECK(ev("silu(inf)") == kInf);
  CHECK(std::isnan(ev("silu(-inf)")));  // -inf * sigmoid(-inf) = -inf * 0

  CHECK(ev("max(1, 2)") == 2.0);
  CHECK(ev("max(2, 1)") == 2.0);
  CHECK(ev("max(-inf, 1)") == 1.0);
  CHECK(ev("min(1, 2)") == 1.0);
  CHECK(ev("min(2, 1)") == 1.0);
  CHECK(ev("min(inf, 1)") == 1.0);

  CHECK(ev("select(1, 10, 20)") == 10.0);
  CHECK(ev("select(-3, 10, 20)") == 10.0);
  CHECK(ev("select(0, 10, 20)") == 20.0);
  CHECK(ev("select(-0, 10, 20)") == 20.0);  // -0 == 0

  CHECK(ev("clamp(5, 0, 3)") == 3.0);
  CHECK(ev("clamp(-1, 0, 3)") == 0.0);
  CHECK(ev("clamp(2, 0, 3)") == 2.0);
  CHECK(ev("clamp(2, 3, 0)") == 0.0);  // lo > hi: min(max(2, 3), 0) = 0
  CHECK(ev("clamp(inf, 0, 3)") == 3.0);
}

TEST_CASE("NaN propagates through every op that computes with it") {
  for (const char* f :
       {"relu", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "erf", "gelu", "silu", "-"}) {
    CAPTURE(f);
    CHECK(std::isnan(ev(std::string(f) + "(x)", {kNaN})));
  }
  for (const char* f : {"x + y", "x - y", "x * y", "x / y", "max(x, y)", "min(x, y)"}) {
    CAPTURE(f);
    CHECK(std::isnan(ev(f, {kNaN, 1.0})));
    CHECK(std::isnan(ev(f, {1.0, kNaN})));
    CHECK(std::isnan(ev(f, {kNaN, kNaN})));
  }
  CHECK(std::isnan(ev("max(x, y)", {kNaN, kInf})));
  CHECK(std::isnan(ev("min(x, y)", {-kInf, kNaN})));
  // Comparisons are false on NaN, except ne.
  for (const char* f : {"x < y", "x <= y", "x > y", "x >= y", "x == y"}) {
    CAPTURE(f);
    CHECK(ev(f, {kNaN, 1.0}) == 0.0);
    CHECK(ev(f, {1.0, kNaN}) == 0.0);
    CHECK(ev(f, {kNaN, kNaN}) == 0.0);
  }
  CHECK(ev("x != y", {kNaN, 1.0}) == 1.0);
  CHECK(ev("x != y", {kNaN, kNaN}) == 1.0);
  // select looks only at the branch it takes; a NaN condition is != 0 and takes the first.
  CHECK(ev("select(x, 1, 2)", {kNaN}) == 1.0);
  CHECK(std::isnan(ev("select(1, x, 2)", {kNaN})));
  CHECK(std::isnan(ev("select(0, 1, x)", {kNaN})));
  CHECK(ev("select(0, x, 2)", {kNaN}) == 2.0);
  CHECK(ev("select(1, 1, x)", {kNaN}) == 1.0);
  // clamp propagates a NaN in any operand.
  CHECK(std::isnan(ev("clamp(x, 0, 1)", {kNaN})));
  CHECK(std::isnan(ev("clamp(0.5, x, 1)", {kNaN})));
  CHECK(std::isnan(ev("clamp(0.5, 0, x)", {kNaN})));
  CHECK(std::isnan(ev("nan")));
}

TEST_CASE("NaN payload and sign: kept by relu, max and min; flipped by neg, cleared by abs") {
  const double payload = std::bit_cast<double>(0x7FF8000000000123ull);
  const double other = std::bit_cast<double>(0x7FF8000000000456ull);
  CHECK(bits(ev("relu(x)", {payload})) == bits(payload));
  CHECK(bits(ev("max(x, y)", {payload, 1.0})) == bits(payload));
  CHECK(bits(ev("max(x, y)", {1.0, payload})) == bits(payload));
  CHECK(bits(ev("min(x, y)", {payload, other})) == bits(payload));  // the first NaN wins
  CHECK(bits(ev("min(x, y)", {other, payload})) == bits(other));
  CHECK(bits(ev("-x", {payload})) == (bits(payload) | 0x8000000000000000ull));
  CHECK(bits(ev("abs(-x)", {payload})) == bits(payload));
}

TEST_CASE("signed zeros") {
  const double pz = 0.0, nz = -0.0;
  CHECK(bits(ev("relu(x)", {nz})) == bits(pz));
  CHECK(bits(ev("relu(x)", {pz})) == bits(pz));
  CHECK(bits(ev("x + y", {nz, nz})) == bits(nz));
  CHECK(bits(ev("-0 + -0")) == bits(nz));
  CHECK(bits(ev("x + y", {nz, pz})) == bits(pz));
  CHECK(bits(ev("x - x", {nz})) == bits(pz));
  CHECK(bits(ev("x * y", {pz, -1.0})) == bits(nz));
  CHECK(bits(ev("abs(x)", {nz})) == bits(pz));
  CHECK(bits(ev("-x", {pz})) == bits(nz));
  CHECK(bits(ev("max(x, y)", {nz, pz})) == bits(pz));
  CHECK(bits(ev("max(x, y)", {pz, nz})) == bits(pz));
  CHECK(bits(ev("max(x, y)", {nz, nz})) == bits(nz));
  CHECK(bits(ev("min(x, y)", {nz, pz})) == bits(nz));
  CHECK(bits(ev("min(x, y)", {pz, nz})) == bits(nz));
  CHECK(bits(ev("min(x, y)", {pz, pz})) == bits(pz));
  CHECK(bits(ev("clamp(x, 0, 1)", {nz})) == bits(pz));  // max(-0, +0) = +0
  CHECK(bits(ev("clamp(x, -0, 1)", {pz})) == bits(pz));
  CHECK(bits(ev("clamp(x, -1, 0)", {nz})) == bits(nz));  // min(-0, +0) = -0
  CHECK(bits(ev("select(x, 1, y)", {nz, nz})) == bits(nz));
  CHECK(bits(ev("gelu(x)", {nz})) == bits(nz));
  CHECK(bits(ev("silu(x)", {nz})) == bits(nz));
  CHECK(bits(ev("tanh(x)", {nz})) == bits(nz));
  CHECK(bits(ev("1 / x", {nz})) == bits(-kInf));
}

TEST_CASE("overflow gives infinity, in float64 and after rounding to float32") {
  CHECK(ev("1e308 * 10") == kInf);
  CHECK(ev("x * 10", {-1e308}) == -kInf);
  CHECK(ev("x + x", {std::numeric_limits<double>::max()}) == kInf);

  float in[2] = {3e38f, 3e38f};
  float out32 = 0;
  double out64 = 0;
  const Expr e = parse("x + y");
  const std::vector<TensorView> inputs{dense(&in[0], DType::f32, {1}),
                                       dense(&in[1], DType::f32, {1})};
  kq::eval_reference(e, inputs, dense(&out32, DType::f32, {1}));
  CHECK(bits(out32) == bits(std::numeric_limits<float>::infinity()));
  kq::eval_reference(e, inputs, dense(&out64, DType::f64, {1}));
  CHECK(out64 == static_cast<double>(3e38f) * 2);  // finite in float64
}

TEST_CASE("subnormals survive: no flush to zero on input, in float64 or on output") {
  const float tiny = 1e-40f;
  REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
  float in = tiny, out = 0;
  kq::eval_reference(parse("x"), std::vector{dense(&in, DType::f32, {1})},
                     dense(&out, DType::f32, {1}));
  CHECK(bits(out) == bits(tiny));
  kq::eval_reference(parse("x * 1"), std::vector{dense(&in, DType::f32, {1})},
                     dense(&out, DType::f32, {1}));
  CHECK(bits(out) == bits(tiny));

  // A float32 subnormal result of a product of normal floats.
  float a[2] = {1e-20f, 1e-20f};
  kq::eval_reference(parse("x * y"),
                     std::vector{dense(&a[0], DType::f32, {1}), dense(&a[1], DType::f32, {1})},
                     dense(&out, DType::f32, {1}));
  CHECK(std::fpclassify(out) == FP_SUBNORMAL);
  CHECK(bits(out) == bits(static_cast<float>(double(a[0]) * double(a[1]))));

  CHECK(ev("x / 2", {std::numeric_limits<double>::denorm_min() * 4}) ==
        std::numeric_limits<double>::denorm_min() * 2);
}

TEST_CASE("the result is rounded once, to nearest even, from the float64 value") {
  const float one = 1.0f;
  const float half_ulp = std::ldexp(1.0f, -24);   // half an ulp of 1.0f
  const float next = std::nextafter(1.0f, 2.0f);  // 1 + 2^-23, odd last bit
  float out = 0;
  auto run = [&](const char* text, std::vector<float> in) {
    std::vector<TensorView> views;
    for (float& v : in) views.push_back(dense(&v, DType::f32, {1}));
    kq::eval_reference(parse(text), views, dense(&out, DType::f32, {1}));
    return out;
  };
  // 1 + 2^-24 is exact in double and halfway between two floats: ties go to the even one.
  CHECK(bits(run("x + y", {one, half_ulp})) == bits(one));
  CHECK(bits(run("x + y", {next, half_ulp})) == bits(std::nextafter(next, 2.0f)));
  // Rounded once at the end, not after each op: in float arithmetic (1 + h) + h is 1.
  volatile float step = one + half_ulp;
  step = step + half_ulp;
  CHECK(bits(static_cast<float>(step)) == bits(one));
  CHECK(bits(run("x + y + z", {one, half_ulp, half_ulp})) == bits(next));
  // Just above the tie rounds up.
  CHECK(bits(run("x + y + z", {one, half_ulp, std::ldexp(1.0f, -40)})) == bits(next));
}

TEST_CASE("eval_scalar handles expressions longer than its inline buffer") {
  std::string text = "x";
  for (int i = 0; i < 100; ++i) text += " + y";
  const Expr e = parse(text);
  REQUIRE(e.nodes.size() > 64);
  CHECK(kq::eval_scalar(e, std::vector{1.0, 0.5, 0.0}) == 51.0);
  CHECK(std::isnan(kq::eval_scalar(Expr{}, {})));
}

TEST_CASE("eval_reference over contiguous tensors, f32 and f64, agrees with eval_scalar") {
  const Expr e = parse("select(x > y, gelu(x) - y, silu(y) * clamp(x, -1, 1)) / (abs(x) + 1)");
  for (DType in_t : {DType::f32, DType::f64}) {
    for (DType out_t : {DType::f32, DType::f64}) {
      CAPTURE(static_cast<int>(in_t));
      CAPTURE(static_cast<int>(out_t));
      const std::int64_t rows = 7, cols = 45;  // not a multiple of the batch
      std::vector<float> x32 = values<float>(rows * cols, 1), y32 = values<float>(rows * cols, 2);
      std::vector<double> x64 = values<double>(rows * cols, 3),
                          y64 = values<double>(rows * cols, 4);
      void* xp = in_t == DType::f32 ? static_cast<void*>(x32.data()) : x64.data();
      void* yp = in_t == DType::f32 ? static_cast<void*>(y32.data()) : y64.data();
      std::vector<double> out_storage(rows * cols, -7.0);
      const std::vector<TensorView> inputs{dense(xp, in_t, {rows, cols}),
                                           dense(yp, in_t, {rows, cols})};
      const TensorView out = dense(out_storage.data(), out_t, {rows, cols});
      kq::eval_reference(e, inputs, out);
      CHECK(check_agrees(e, inputs, out) == rows * cols);
    }
  }
}

TEST_CASE("eval_reference over strided, transposed, broadcast and reversed views") {
  const Expr e = parse("relu(x + y) * z");
  const std::int64_t rows = 6, cols = 10;
  std::vector<float> big = values<float>(4 * rows * cols, 7);
  std::vector<double> other = values<double>(4 * rows * cols, 8);

  SUBCASE("every other element, output with gaps left untouched") {
    const TensorView x = view(big.data(), DType::f32, {rows, cols}, {2 * cols, 2});
    const TensorView y = view(other.data() + 1, DType::f64, {rows, cols}, {3 * cols, 3});
    const TensorView z = view(big.data() + 1, DType::f32, {rows, cols}, {2 * cols, 2});
    std::vector<float> out_storage(3 * rows * cols, 123.0f);
    const TensorView out = view(out_storage.data(), DType::f32, {rows, cols}, {3 * cols, 3});
    kq::eval_reference(e, std::vector{x, y, z}, out);
    check_agrees(e, {x, y, z}, out);
    for (std::size_t i = 0; i < out_storage.size(); ++i)
      if (i % 3 != 0) REQUIRE(out_storage[i] == 123.0f);
  }
  SUBCASE("transposed: column-major input into a row-major output") {
    const TensorView x = view(big.data(), DType::f32, {rows, cols}, {1, rows});
    const TensorView y = dense(other.data(), DType::f64, {rows, cols});
    const TensorView z = view(other.data(), DType::f64, {rows, cols}, {1, rows});
    std::vector<double> out_storage(rows * cols);
    const TensorView out = view(out_storage.data(), DType::f64, {rows, cols}, {1, rows});
    kq::eval_reference(e, std::vector{x, y, z}, out);
    check_agrees(e, {x, y, z}, out);
  }
  SUBCASE("stride 0: a row broadcast over rows and a scalar over everything") {
    std::vector<float> bias = values<float>(cols, 9);
    float scale = 0.5f;
    big[cols + 3] = 1.5f;
    bias[3] = 2.0f;
    const TensorView x = dense(big.data(), DType::f32, {rows, cols});
    const TensorView y = view(bias.data(), DType::f32, {rows, cols}, {0, 1});
    const TensorView z = view(&scale, DType::f32, {rows, cols}, {0, 0});
    std::vector<float> out_storage(rows * cols);
    const TensorView out = dense(out_storage.data(), DType::f32, {rows, cols});
    kq::eval_reference(e, std::vector{x, y, z}, out);
    check_agrees(e, {x, y, z}, out);
    CHECK(out_storage[cols + 3] == 1.75f);  // relu(1.5 + 2) * 0.5
  }
  SUBCASE("negative strides: rows and columns reversed") {
    const TensorView x = view(big.data() + rows * cols - 1, DType::f32, {rows, cols}, {-cols, -1});
    const TensorView y =
        view(other.data() + (rows - 1) * cols, DType::f64, {rows, cols}, {-cols, 1});
    const TensorView z = dense(other.data(), DType::f64, {rows, cols});
    std::vector<float> out_storage(rows * cols);
    const TensorView out =
        view(out_storage.data() + rows * cols - 1, DType::f32, {rows, cols}, {-cols, -1});
    kq::eval_reference(e, std::vector{x, y, z}, out);
    check_agrees(e, {x, y, z}, out);
  }
  SUBCASE("rank 0 and rank 8") {
    float a = 2.0f, b = -0.5f, c = 3.0f, o = 0.0f;
    const TensorView x = view(&a, DType::f32, {}, {}), y = view(&b, DType::f32, {}, {}),
                     z = view(&c, DType::f32, {}, {});
    kq::eval_reference(e, std::vector{x, y, z}, view(&o, DType::f32, {}, {}));
    CHECK(o == 4.5f);

    const std::vector<std::int64_t> shape{2, 1, 3, 2, 1, 2, 2, 3};
    std::vector<double> o8(144);
    const TensorView x8 = dense(big.data(), DType::f32, shape);
    const TensorView y8 = dense(other.data(), DType::f64, shape);
    std::vector<std::int64_t> zs(8, 0);
    zs[7] = 1;  // broadcast over all but the last dimension
    const TensorView z8 = view(big.data() + 200, DType::f32, shape, zs);
    const TensorView out8 = dense(o8.data(), DType::f64, shape);
    kq::eval_reference(e, std::vector{x8, y8, z8}, out8);
    CHECK(check_agrees(e, {x8, y8, z8}, out8) == 144);
  }
  SUBCASE("no elements: nothing is read or written") {
    const TensorView x = dense(nullptr, DType::f32, {0, cols});
    CHECK_NOTHROW(
        kq::eval_reference(e, std::vector{x, x, x}, dense(nullptr, DType::f32, {0, cols})));
  }
}

TEST_CASE("eval_reference in parallel over many elements, in both paths") {
  const Expr e = parse("gelu(x) * sigmoid(y) + clamp(x, -1, 1) - sqrt(abs(y))");
  const std::int64_t rows = 517, cols = 389;  // many TBB chunks, ragged against each size
  std::vector<float> x = values<float>(rows * cols, 11);
  std::vector<double> y = values<double>(rows * cols, 12);
  std::vector<float> out_storage(rows * cols);

  const TensorView xc = dense(x.data(), DType::f32, {rows, cols});
  const TensorView yc = dense(y.data(), DType::f64, {rows, cols});
  const TensorView out = dense(out_storage.data(), DType::f32, {rows, cols});
  kq::eval_reference(e, std::vector{xc, yc}, out);
  CHECK(check_agrees(e, {xc, yc}, out) == rows * cols);

  std::fill(out_storage.begin(), out_storage.end(), 0.0f);
  const TensorView xt = view(x.data(), DType::f32, {rows, cols}, {1, rows});
  kq::eval_reference(e, std::vector{xt, yc}, out);
  CHECK(check_agrees(e, {xt, yc}, out) == rows * cols);
}

TEST_CASE("eval_reference in place: the output may be exactly one of the inputs") {
  const std::int64_t n = 1000;
  std::vector<float> x = values<float>(n, 13), y = values<float>(n, 14);
  const std::vector<float> x0 = x;
  const TensorView xv = dense(x.data(), DType::f32, {n}), yv = dense(y.data(), DType::f32, {n});
  kq::eval_reference(parse("relu(x + y)"), std::vector{xv, yv}, xv);
  const TensorView x0v = dense(const_cast<float*>(x0.data()), DType::f32, {n});
  CHECK(check_agrees(parse("relu(x + y)"), {x0v, yv}, xv) == n);
}

TEST_CASE("eval_reference with no inputs fills the output with the constant") {
  std::vector<double> out(1000, 0.0);
  kq::eval_reference(parse("2 + 3"), {}, dense(out.data(), DType::f64, {10, 100}));
  CHECK(std::count(out.begin(), out.end(), 5.0) == 1000);
}

TEST_CASE("eval_reference rejects bad arguments with invalid_argument") {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, o[4] = {};
  const Expr e = parse("x + y");
  const TensorView x = dense(a, DType::f32, {4}), y = dense(b, DType::f32, {4});
  const TensorView out = dense(o, DType::f32, {4});

  check_throws(e, {x}, out, "the expression reads 2 input(s) but 1 tensor(s) were given");
  check_throws(e, {x, y, y}, out, "reads 2 input(s) but 3");
  check_throws(parse("y"), {x}, out, "reads 2 input(s)");  // indices address the spec's inputs
  check_throws(e, {x, dense(b, DType::f32, {2, 2})}, out,
               "input 1 has shape [2, 2] but out has shape [4]");
  check_throws(e, {x, dense(b, DType::f32, {3})}, out, "input 1 has shape [3]");
  TensorView on_gpu = y;
  on_gpu.device = kq::Device::cuda;
  check_throws(e, {x, on_gpu}, out, "input 1 is on device cuda");
  TensorView out_gpu = out;
  out_gpu.device = kq::Device::cuda;
  check_throws(e, {x, y}, out_gpu, "out is on device cuda");
  check_throws(e, {x, y}, view(o, DType::f32, {4}, {0}), "out has stride 0 in dimension 0");
  check_throws(e, {x, dense(nullptr, DType::f32, {4})}, out, "input 1 has no data pointer");
  TensorView too_deep = out;
  too_deep.rank = kq::kMaxRank + 1;
  check_throws(e, {x, y}, too_deep, "out has rank 9");
  check_throws(e, {x, y}, view(o, DType::f32, {-4}, {1}), "out has a negative extent");
  check_throws(Expr{}, {}, out, "eval_reference: empty expression");
  Expr forward = e;
  forward.nodes.back().args[1] = 2;
  check_throws(forward, {x, y}, out, "node 2 (add): operand 1 (node 2) is not an earlier node");
  for (float v : o) CHECK(v == 0.0f);  // nothing was written
}
