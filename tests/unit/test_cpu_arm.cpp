// The cpu_tbb arm (plugins/cpu), loaded as the host would: dlopen the plugin and read its
// Boost.DLL-style aliases. Expressions are built as node lists by hand (the parser is core's), and
// expected values are computed here in double and rounded to the dtype.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "expr_nodes.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"

namespace {

using kq::DType;
using kq::Op;
using kq::TensorView;

constexpr const char* kPluginPath = KQ_BIN_DIR "/plugins/libkq_cpu.so";

// --- loading --------------------------------------------------------------------------------

void* plugin_handle() {
  static void* h = dlopen(kPluginPath, RTLD_NOW | RTLD_LOCAL);  // never closed: arms outlive tests
  return h;
}

template <class Fn>
Fn alias(const char* name) {
  void* sym = dlsym(plugin_handle(), name);
  REQUIRE_MESSAGE(sym != nullptr, "missing alias ", name);
  return reinterpret_cast<Fn>(*static_cast<const void* const*>(sym));
}

std::unique_ptr<kq::IKernelArm> make_arm() {
  REQUIRE_MESSAGE(plugin_handle() != nullptr, "dlopen ", kPluginPath, ": ", dlerror());
  kq::ArmList arms;
  alias<void (*)(kq::ArmList&)>("kq_create_arms")(arms);
  for (auto& a : arms) {
    if (a->identity().name == "cpu_tbb") return std::move(a);
  }
  FAIL("no arm named cpu_tbb");
  return nullptr;
}

// --- expressions and specs ------------------------------------------------------------------

using kq::test::ExprBuilder;

kq::Expr relu_add() {
  ExprBuilder b;
  b.op(Op::relu, b.op(Op::add, b.in(0), b.in(1)));
  return b.done("relu(x + residual)");
}

kq::OpSpec make_spec(kq::Expr e, std::vector<std::string> inputs, DType t = DType::f32) {
  kq::OpSpec s;
  s.op = "test";
  s.dtype = t;
  s.compute = t;  // the spec parser's default for f32 and f64
  s.inputs = std::move(inputs);
  s.outputs = {kq::OutputSpec{"out", {}}};
  s.semantics = std::move(e);
  s.domain = kq::Domain::ieee;
  s.layouts.contiguous_only = false;
  s.layouts.ranks = {0, 1, 2, 3, 4};
  return s;
}

// --- buffers --------------------------------------------------------------------------------

// A host buffer with guard zones on both sides that must survive every run.
template <class T>
struct Buf {
  static constexpr std::size_t kGuard = 64;
  std::vector<T> storage;
  std::size_t n;
  explicit Buf(std::size_t count) : storage(count + 2 * kGuard), n(count) {
    for (auto& v : storage) v = guard_value();
  }
  static T guard_value() { return std::bit_cast<T>(poison_bits()); }
  static auto poison_bits() {
    if constexpr (sizeof(T) == 4)
      return std::uint32_t{0x7fa5a5a5};
    else
      return std::uint64_t{0x7ff5a5a5a5a5a5a5};
  }
  T* data() { return storage.data() + kGuard; }
  T& operator[](std::size_t i) { return data()[i]; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < kGuard; ++i) {
      if (std::bit_cast<decltype(poison_bits())>(storage[i]) != poison_bits()) return false;
      if (std::bit_cast<decltype(poison_bits())>(storage[kGuard + n + i]) != poison_bits())
        return false;
    }
    return true;
  }
  void poison() {
    for (std::size_t i = 0; i < n; ++i) data()[i] = guard_value();
  }
};

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, kq::Half>) return DType::f16;
  if constexpr (std::is_same_v<T, kq::BFloat16>) return DType::bf16;
  return sizeof(T) == 4 ? DType::f32 : DType::f64;
}

template <class T>
TensorView view(T* p, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {}) {
  TensorView v;
  v.data = p;
  v.dtype = dtype_of<T>();
  v.rank = static_cast<int>(shape.size());
  std::int64_t s = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides.empty() ? s : strides[d];
    s *= shape[d];
  }
  return v;
}

template <class T>
TensorView view1(T* p, std::int64_t n) {
  return view(p, {n});
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

kq::Status prepare_run(kq::IKernelArm& arm, const kq::OpSpec& spec, std::vector<TensorView> ins,
                       TensorView out) {
  kq::Problem p{&spec, ins, {out}};
  kq::Status s = arm.prepare(p);
  if (!s.is_ok()) return s;
  return arm.run(ins, std::span<const TensorView>(&out, 1), nullptr);
}

template <class T>
auto bits(T v) {
  if constexpr (sizeof(T) == 4)
    return std::bit_cast<std::uint32_t>(v);
  else
    return std::bit_cast<std::uint64_t>(v);
}

// Bitwise equality, except that any NaN matches any NaN.
template <class T>
bool same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b);
}

// Distance in units in the last place; zeros must match in sign, NaN must match NaN.
template <class T>
std::int64_t ulps(T got, T want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : -1;
  if (got == 0 && want == 0) return bits(got) == bits(want) ? 0 : -1;
  if (std::isinf(got) || std::isinf(want)) return got == want ? 0 : -1;
  if (std::signbit(got) != std::signbit(want)) return -1;
  const auto a = static_cast<std::int64_t>(bits(std::abs(got)));
  const auto b = static_cast<std::int64_t>(bits(std::abs(want)));
  return a > b ? a - b : b - a;
}

double relu_d(double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }

// Checks out[i] == want(i) bitwise for every i; reports the first mismatch.
template <class T, class Want>
void check_all(const T* out, std::size_t n, Want want) {
  std::size_t bad = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (!same(out[i], static_cast<T>(want(i)))) {
      if (bad++ == 0) first = i;
    }
  }
  INFO("first bad index ", first, " of ", n);
  if (first < n) INFO("got ", out[first], " want ", static_cast<T>(want(first)));
  CHECK(bad == 0);
}

// --- tests ----------------------------------------------------------------------------------

TEST_CASE("plugin exports the ABI version and the cpu_tbb identity") {
  REQUIRE_MESSAGE(plugin_handle() != nullptr, dlerror());
  CHECK(alias<std::uint32_t (*)()>("kq_abi_version")() == kq::kAbiVersion);
  auto arm = make_arm();
  const kq::ArmIdentity id = arm->identity();
  CHECK(id.name == "cpu_tbb");
  CHECK(id.family == "cpu");
  CHECK(id.device == kq::Device::cpu);
  CHECK(id.version == "1");
  CHECK_FALSE(id.compile_flags.empty());
  bool has_arm_source = false;
  for (const auto& f : id.sources) {
    CHECK(f.sha256.size() == 64);
    has_arm_source = has_arm_source || f.path == "plugins/cpu/cpu_arm.cpp";
  }
  CHECK(has_arm_source);
}

TEST_CASE("supports: f32 and f64 with any expression; refuses beyond its limits") {
  auto arm = make_arm();
  CHECK(arm->supports(make_spec(relu_add(), {"x", "residual"})).is_ok());
  CHECK(arm->supports(make_spec(relu_add(), {"x", "residual"}, DType::f64)).is_ok());

  auto bad_dtype = make_spec(relu_add(), {"x", "residual"});
  bad_dtype.dtype = static_cast<DType>(7);
  CHECK(arm->supports(bad_dtype).is_unsupported());

  std::vector<std::string> many(17, "");
  ExprBuilder b17;
  int acc = b17.in(0);
  for (int i = 1; i < 17; ++i) {
    many[i] = "i" + std::to_string(i);
    acc = b17.op(Op::add, acc, b17.in(i));
  }
  many[0] = "i0";
  const auto s17 = arm->supports(make_spec(b17.done("sum"), many));
  CHECK(s17.is_unsupported());
  CHECK_FALSE(s17.message().empty());

  ExprBuilder deep;
  int v = deep.in(0);
  for (int i = 0; i < 300; ++i) v = deep.op(Op::neg, v);
  CHECK(arm->supports(make_spec(deep.done("deep"), {"x"})).is_unsupported());

  kq::Expr forward = relu_add();
  forward.nodes[2].args[0] = 2;  // an operand that is not an earlier node
  CHECK(arm->supports(make_spec(forward, {"x", "residual"})).is_unsupported());
  CHECK(arm->supports(make_spec(kq::Expr{}, {"x"})).is_unsupported());
  kq::Expr bad_input = relu_add();
  bad_input.nodes[1].input = 5;
  CHECK(arm->supports(make_spec(bad_input, {"x", "residual"})).is_unsupported());

  auto two_outputs = make_spec(relu_add(), {"x", "residual"});
  two_outputs.outputs.push_back({"out2", {}});
  CHECK(arm->supports(two_outputs).is_unsupported());
}

TEST_CASE("relu(x + residual) on many sizes, bitwise against double arithmetic") {
  auto arm = make_arm();
  const auto spec = make_spec(relu_add(), {"x", "residual"});
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{2049},
                        std::size_t{4097}, std::size_t{1} << 20}) {
    CAPTURE(n);
    const auto xs = random_floats(n, 1 + static_cast<std::uint32_t>(n));
    const auto rs = random_floats(n, 99 + static_cast<std::uint32_t>(n));
    Buf<float> x(n), r(n), out(n);
    std::copy(xs.begin(), xs.end(), x.data());
    std::copy(rs.begin(), rs.end(), r.data());
    const auto n64 = static_cast<std::int64_t>(n);
    REQUIRE(prepare_run(*arm, spec, {view1(x.data(), n64), view1(r.data(), n64)},
                        view1(out.data(), n64))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t i) { return relu_d(double(xs[i]) + double(rs[i])); });
    CHECK(out.guards_intact());
    CHECK(x.guards_intact());
    CHECK(std::equal(xs.begin(), xs.end(), x.data()));  // inputs untouched
    // Same pointers, new values: nothing is cached between runs.
    for (std::size_t i = 0; i < n; ++i) x[i] = -xs[i];
    TensorView ins[2] = {view1(x.data(), n64), view1(r.data(), n64)};
    TensorView o = view1(out.data(), n64);
    REQUIRE(arm->run(ins, std::span(&o, 1), nullptr).is_ok());
    check_all(out.data(), n, [&](std::size_t i) { return relu_d(-double(xs[i]) + double(rs[i])); });
  }
}

TEST_CASE("zero elements with null pointers are a no-op") {
  auto arm = make_arm();
  const auto spec = make_spec(relu_add(), {"x", "residual"});
  CHECK(prepare_run(*arm, spec, {view1<float>(nullptr, 0), view1<float>(nullptr, 0)},
                    view1<float>(nullptr, 0))
            .is_ok());
  CHECK(prepare_run(*arm, spec, {view<float>(nullptr, {4, 0}), view<float>(nullptr, {4, 0})},
                    view<float>(nullptr, {4, 0}))
            .is_ok());
}

TEST_CASE("IEEE details: NaN propagation, signed zeros, denormals") {
  auto arm = make_arm();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {nan,    1.0f,    -0.0f, 0.0f, -0.0f, 1e-40f,
                                 1e-40f, -1e-40f, inf,   -inf, inf};
  const std::vector<float> rs = {1.0f,   nan,  -0.0f, -0.0f, 0.0f, 0.0f,
                                 1e-40f, 0.0f, 1.0f,  1.0f,  -inf};
  const std::size_t n = xs.size();
  Buf<float> x(n), r(n), out(n);
  std::copy(xs.begin(), xs.end(), x.data());
  std::copy(rs.begin(), rs.end(), r.data());
  const auto n64 = static_cast<std::int64_t>(n);

  SUBCASE("relu(x + residual)") {
    REQUIRE(prepare_run(*arm, make_spec(relu_add(), {"x", "residual"}),
                        {view1(x.data(), n64), view1(r.data(), n64)}, view1(out.data(), n64))
                .is_ok());
    CHECK(std::isnan(out[0]));
    CHECK(std::isnan(out[1]));
    CHECK(bits(out[2]) == 0u);                     // relu(-0 + -0) = relu(-0) = +0
    CHECK(bits(out[5]) == bits(1e-40f));           // denormal not flushed
    CHECK(bits(out[6]) == bits(1e-40f + 1e-40f));  // exact: twice the denormal
    CHECK(bits(out[7]) == 0u);
    CHECK(out[8] == inf);
    CHECK(out[9] == 0.0f);
    CHECK(std::isnan(out[10]));  // inf + -inf
  }
  SUBCASE("x + residual keeps -0") {
    ExprBuilder b;
    b.op(Op::add, b.in(0), b.in(1));
    REQUIRE(prepare_run(*arm, make_spec(b.done("x + residual"), {"x", "residual"}),
                        {view1(x.data(), n64), view1(r.data(), n64)}, view1(out.data(), n64))
                .is_ok());
    CHECK(bits(out[2]) == 0x80000000u);  // (-0) + (-0) = -0
    CHECK(bits(out[3]) == 0u);           // (+0) + (-0) = +0
    CHECK(bits(out[5]) == bits(1e-40f));
    CHECK(bits(out[7]) == bits(-1e-40f));
  }
}

#if defined(__x86_64__)
TEST_CASE(
    "a caller's flush-to-zero / denormals-are-zero mode does not leak "
    "into the run") {
  auto arm = make_arm();
  const std::size_t n = 1 << 16;  // large enough to run on the TBB workers too
  Buf<float> x(n), r(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = (i % 2) ? 1e-40f : -3e-39f;
    r[i] = (i % 3) ? 1e-41f : 0.0f;
  }
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | (1u << 15) | (1u << 6));
  const auto s = prepare_run(*arm, make_spec(relu_add(), {"x", "residual"}),
                             {view1(x.data(), std::int64_t(n)), view1(r.data(), std::int64_t(n))},
                             view1(out.data(), std::int64_t(n)));
  const unsigned after = _mm_getcsr();
  _mm_setcsr(saved);
  REQUIRE(s.is_ok());
  CHECK(after == (saved | (1u << 15) | (1u << 6)));  // the caller's mode is restored
  check_all(out.data(), n, [&](std::size_t i) { return relu_d(double(x[i]) + double(r[i])); });
}
#endif

TEST_CASE("strided, transposed, broadcast and reversed inputs; strided output") {
  auto arm = make_arm();
  const auto spec = make_spec(relu_add(), {"x", "residual"});

  SUBCASE("every other element, input and output") {
    for (std::int64_t n : {std::int64_t{5}, std::int64_t{3001}, std::int64_t{70001}}) {
      CAPTURE(n);
      const auto xs = random_floats(2 * n, 7);
      const auto rs = random_floats(n, 8);
      Buf<float> x(2 * n), r(n), out(2 * n);
      std::copy(xs.begin(), xs.end(), x.data());
      std::copy(rs.begin(), rs.end(), r.data());
      REQUIRE(prepare_run(*arm, spec, {view(x.data(), {n}, {2}), view1(r.data(), n)},
                          view(out.data(), {n}, {2}))
                  .is_ok());
      std::size_t bad = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        bad += !same(out[2 * i], float(relu_d(double(xs[2 * i]) + double(rs[i]))));
        bad += bits(out[2 * i + 1]) != Buf<float>::poison_bits();  // gaps untouched
      }
      CHECK(bad == 0);
      CHECK(out.guards_intact());
    }
  }
  SUBCASE("transposed 2-D input") {
    for (auto [R, C] : {std::pair<std::int64_t, std::int64_t>{37, 53}, {300, 129}}) {
      CAPTURE(R);
      // x(i, j) = xt[j * R + i]: the transpose of a C x R row-major matrix.
      const auto xt = random_floats(R * C, 11);
      const auto rs = random_floats(R * C, 12);
      Buf<float> x(R * C), r(R * C), out(R * C);
      std::copy(xt.begin(), xt.end(), x.data());
      std::copy(rs.begin(), rs.end(), r.data());
      REQUIRE(prepare_run(*arm, spec, {view(x.data(), {R, C}, {1, R}), view(r.data(), {R, C})},
                          view(out.data(), {R, C}))
                  .is_ok());
      check_all(out.data(), R * C, [&](std::size_t k) {
        const std::int64_t i = k / C, j = k % C;
        return relu_d(double(xt[j * R + i]) + double(rs[k]));
      });
    }
  }
  SUBCASE("stride-0 broadcasts: row, column, scalar") {
    const std::int64_t R = 211, C = 97;  // 20467 elements: the parallel path
    const auto xs = random_floats(R * C, 21);
    const auto b = random_floats(std::max(R, C), 22);
    Buf<float> x(R * C), bias(std::max(R, C)), out(R * C);
    std::copy(xs.begin(), xs.end(), x.data());
    std::copy(b.begin(), b.end(), bias.data());
    struct Case {
      std::vector<std::int64_t> strides;
      std::function<float(std::int64_t, std::int64_t)> value;
    };
    const std::vector<Case> cases = {
        {{0, 1}, [&](std::int64_t, std::int64_t j) { return b[j]; }},
        {{1, 0}, [&](std::int64_t i, std::int64_t) { return b[i]; }},
        {{0, 0}, [&](std::int64_t, std::int64_t) { return b[0]; }},
    };
    for (const auto& c : cases) {
      CAPTURE(c.strides[0]);
      CAPTURE(c.strides[1]);
      out.poison();
      REQUIRE(prepare_run(*arm, spec,
                          {view(x.data(), {R, C}), view(bias.data(), {R, C}, c.strides)},
                          view(out.data(), {R, C}))
                  .is_ok());
      check_all(out.data(), R * C, [&](std::size_t k) {
        return relu_d(double(xs[k]) + double(c.value(k / C, k % C)));
      });
    }
  }
  SUBCASE("negative strides and a rank-4 permuted view") {
    const std::int64_t n = 5000;
    const auto xs = random_floats(n, 31);
    const auto rs = random_floats(n, 32);
    Buf<float> x(n), r(n), out(n);
    std::copy(xs.begin(), xs.end(), x.data());
    std::copy(rs.begin(), rs.end(), r.data());
    REQUIRE(prepare_run(*arm, spec, {view(x.data() + n - 1, {n}, {-1}), view1(r.data(), n)},
                        view1(out.data(), n))
                .is_ok());
    check_all(out.data(), n,
              [&](std::size_t i) { return relu_d(double(xs[n - 1 - i]) + double(rs[i])); });

    // Shape (4, 5, 10, 25): x is stored as (25, 10, 5, 4) row-major (all axes reversed in order),
    // the output with its rows reversed on axis 2.
    const std::int64_t A = 4, B = 5, Cc = 10, D = 25;
    const auto offs_x = [&](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
      return d * (Cc * B * A) + c * (B * A) + b * A + a;
    };
    out.poison();
    REQUIRE(prepare_run(*arm, spec,
                        {view(x.data(), {A, B, Cc, D}, {1, A, B * A, Cc * B * A}),
                         view(r.data(), {A, B, Cc, D})},
                        view(out.data() + (Cc - 1) * D, {A, B, Cc, D}, {B * Cc * D, Cc * D, -D, 1}))
                .is_ok());
    std::size_t bad = 0;
    for (std::int64_t a = 0; a < A; ++a)
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t c = 0; c < Cc; ++c)
          for (std::int64_t d = 0; d < D; ++d) {
            const std::int64_t k = ((a * B + b) * Cc + c) * D + d;
            const std::int64_t o = (Cc - 1) * D + a * B * Cc * D + b * Cc * D - c * D + d;
            bad += !same(out[o], float(relu_d(double(xs[offs_x(a, b, c, d)]) + double(rs[k]))));
          }
    CHECK(bad == 0);
    CHECK(out.guards_intact());
  }
}

TEST_CASE("f64 spec computes in double") {
  auto arm = make_arm();
  const std::size_t n = 100003;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> d(0.0, 2.0);
  Buf<double> x(n), r(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = d(rng);
    r[i] = d(rng);
  }
  x[0] = -0.0;
  r[0] = -0.0;
  x[1] = 1e-310;  // a double denormal
  r[1] = 0.0;
  // relu(x + residual) * x - residual / 3: float32 rounding would show at once.
  ExprBuilder b;
  const int xi = b.in(0), ri = b.in(1);
  b.op(Op::sub, b.op(Op::mul, b.op(Op::relu, b.op(Op::add, xi, ri)), xi),
       b.op(Op::div, ri, b.c(3.0)));
  const auto spec =
      make_spec(b.done("relu(x + residual) * x - residual / 3"), {"x", "residual"}, DType::f64);
  REQUIRE(prepare_run(*arm, spec,
                      {view1(x.data(), std::int64_t(n)), view1(r.data(), std::int64_t(n))},
                      view1(out.data(), std::int64_t(n)))
              .is_ok());
  check_all(out.data(), n, [&](std::size_t i) { return relu_d(x[i] + r[i]) * x[i] - r[i] / 3.0; });
  CHECK(bits(out[0]) == 0u);  // relu(-0) * -0 - (-0 / 3) = (0 * -0) - (-0) = -0 + 0 = +0
  CHECK(out.guards_intact());
}

// Expected values of each function, defined as core/expr/reference.hpp does, in R: double for
// f32 results, long double for f64 ones (so the expectation is well below an f64 ULP).
template <class R>
R ref_unary(Op op, R x) {
  switch (op) {
    case Op::neg:
      return -x;
    case Op::relu:
      return std::isnan(x) ? x : (x > 0 ? x : R(0));
    case Op::abs:
      return std::fabs(x);
    case Op::exp:
      return std::exp(x);
    case Op::log:
      return std::log(x);
    case Op::sqrt:
      return std::sqrt(x);
    case Op::tanh:
      return std::tanh(x);
    case Op::sigmoid:
      return R(1) / (R(1) + std::exp(-x));
    case Op::erf:
      return std::erf(x);
    case Op::gelu:
      // 0.5 x (1 + erf(x / sqrt 2)) written with erfc: the same function, but 1 + erf(..) cancels
      // for negative x (at x = -7.5 it is wrong in the 4th digit even in double).
      return R(0.5) * x * std::erfc(-x / std::sqrt(R(2)));
    case Op::silu:
      return x * (R(1) / (R(1) + std::exp(-x)));
    default:
      return std::nan("");
  }
}

double ref_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if (a == 0 && b == 0) return (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0;
  return a > b ? a : b;
}
double ref_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  if (a == 0 && b == 0) return (std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0;
  return a < b ? a : b;
}

double ref_binary(Op op, double a, double b) {
  switch (op) {
    case Op::add:
      return a + b;
    case Op::sub:
      return a - b;
    case Op::mul:
      return a * b;
    case Op::div:
      return a / b;
    case Op::max:
      return ref_max(a, b);
    case Op::min:
      return ref_min(a, b);
    case Op::lt:
      return a < b;
    case Op::le:
      return a <= b;
    case Op::gt:
      return a > b;
    case Op::ge:
      return a >= b;
    case Op::eq:
      return a == b;
    case Op::ne:
      return a != b;
    default:
      return std::nan("");
  }
}

template <class T>
void check_unary_functions(std::int64_t max_ulps) {
  auto arm = make_arm();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> pts = {T(-7.5), T(-3),  T(-1), T(-0.5), T(-0.0), T(0.0), T(0.25),
                              T(1),    T(2.5), T(9),  T(1e-3), inf,     -inf,   nan};
  const auto n = static_cast<std::int64_t>(pts.size());
  Buf<T> x(pts.size()), out(pts.size());
  std::copy(pts.begin(), pts.end(), x.data());
  for (Op op : {Op::neg, Op::relu, Op::abs, Op::exp, Op::log, Op::sqrt, Op::tanh, Op::sigmoid,
                Op::erf, Op::gelu, Op::silu}) {
    CAPTURE(std::string(kq::to_string(op)));
    ExprBuilder b;
    b.op(op, b.in(0));
    out.poison();
    REQUIRE(prepare_run(*arm,
                        make_spec(b.done(std::string(kq::to_string(op))), {"x"}, dtype_of<T>()),
                        {view1(x.data(), n)}, view1(out.data(), n))
                .is_ok());
    const bool exact = op == Op::neg || op == Op::relu || op == Op::abs || op == Op::sqrt;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      CAPTURE(pts[i]);
      using R = std::conditional_t<sizeof(T) == 4, double, long double>;
      const T want = static_cast<T>(ref_unary<R>(op, R(pts[i])));
      CAPTURE(want);
      CAPTURE(out[i]);
      const std::int64_t d = ulps(out[i], want);
      CHECK(d >= 0);
      // gelu's tail is ill-conditioned: at x = -7.5 the relative error of the rounded x / sqrt 2
      // is multiplied by about z^2 = 28, so any evaluation in T is tens of ULPs off there.
      const std::int64_t tol = exact ? 0 : (op == Op::gelu && sizeof(T) == 8 ? 64 : max_ulps);
      CHECK(d <= tol);
    }
  }
}

TEST_CASE("every unary function at a few points, f32 and f64") {
  SUBCASE("f32") { check_unary_functions<float>(4); }
  SUBCASE("f64") { check_unary_functions<double>(4); }
}

TEST_CASE("every binary function on specials, bitwise") {
  auto arm = make_arm();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> vals = {-2.0f, -0.0f, 0.0f, 1.5f, 3.0f, inf, -inf, nan, 1e-40f};
  std::vector<float> as, bs;
  for (float a : vals)
    for (float b : vals) {
      as.push_back(a);
      bs.push_back(b);
    }
  const auto n = static_cast<std::int64_t>(as.size());
  Buf<float> a(as.size()), b(as.size()), out(as.size());
  std::copy(as.begin(), as.end(), a.data());
  std::copy(bs.begin(), bs.end(), b.data());
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::max, Op::min, Op::lt, Op::le, Op::gt,
                Op::ge, Op::eq, Op::ne}) {
    CAPTURE(std::string(kq::to_string(op)));
    ExprBuilder eb;
    eb.op(op, eb.in(0), eb.in(1));
    REQUIRE(prepare_run(*arm, make_spec(eb.done("f(a, b)"), {"a", "b"}),
                        {view1(a.data(), n), view1(b.data(), n)}, view1(out.data(), n))
                .is_ok());
    for (std::size_t i = 0; i < as.size(); ++i) {
      CAPTURE(as[i]);
      CAPTURE(bs[i]);
      CHECK(same(out[i], float(ref_binary(op, as[i], bs[i]))));
    }
  }
  // Spot checks of the rules themselves, independent of ref_max/ref_min above.
  auto one = [&](Op op, float x, float y) {
    ExprBuilder eb;
    eb.op(op, eb.in(0), eb.in(1));
    float xv = x, yv = y, o = 0;
    REQUIRE(prepare_run(*arm, make_spec(eb.done("f"), {"a", "b"}), {view1(&xv, 1), view1(&yv, 1)},
                        view1(&o, 1))
                .is_ok());
    return o;
  };
  CHECK(bits(one(Op::max, -0.0f, 0.0f)) == 0u);
  CHECK(bits(one(Op::max, 0.0f, -0.0f)) == 0u);
  CHECK(bits(one(Op::min, 0.0f, -0.0f)) == 0x80000000u);
  CHECK(bits(one(Op::min, -0.0f, 0.0f)) == 0x80000000u);
  CHECK(std::isnan(one(Op::max, nan, 1.0f)));
  CHECK(std::isnan(one(Op::max, 1.0f, nan)));
  CHECK(std::isnan(one(Op::min, nan, 1.0f)));
  CHECK(std::isnan(one(Op::min, 1.0f, nan)));
  CHECK(one(Op::ne, nan, nan) == 1.0f);
  CHECK(one(Op::eq, nan, nan) == 0.0f);
  CHECK(one(Op::eq, -0.0f, 0.0f) == 1.0f);
}

TEST_CASE("three-input select and clamp") {
  auto arm = make_arm();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::size_t n = 30011;  // parallel path, several blocks
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(0, 9);
  std::normal_distribution<float> d(0.0f, 2.0f);
  Buf<float> x(n), lo(n), hi(n), out(n);
  auto special = [&](float v) {
    switch (pick(rng)) {
      case 0:
        return nan;
      case 1:
        return -0.0f;
      case 2:
        return 0.0f;
      default:
        return v;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = special(d(rng));
    lo[i] = special(-std::abs(d(rng)));
    hi[i] = special(std::abs(d(rng)));
  }
  const auto n64 = static_cast<std::int64_t>(n);
  const std::vector<TensorView> ins = {view1(x.data(), n64), view1(lo.data(), n64),
                                       view1(hi.data(), n64)};
  SUBCASE("clamp(x, lo, hi)") {
    ExprBuilder b;
    b.op(Op::clamp, b.in(0), b.in(1), b.in(2));
    REQUIRE(prepare_run(*arm, make_spec(b.done("clamp(x, lo, hi)"), {"x", "lo", "hi"}), ins,
                        view1(out.data(), n64))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t i) { return ref_min(ref_max(x[i], lo[i]), hi[i]); });
  }
  SUBCASE("select(x > 0, clamp(x, lo, hi), x * lo)") {
    ExprBuilder b;
    const int xi = b.in(0), li = b.in(1), hi_i = b.in(2);
    b.op(Op::select, b.op(Op::gt, xi, b.c(0.0)), b.op(Op::clamp, xi, li, hi_i),
         b.op(Op::mul, xi, li));
    REQUIRE(
        prepare_run(*arm,
                    make_spec(b.done("select(x > 0, clamp(x, lo, hi), x * lo)"), {"x", "lo", "hi"}),
                    ins, view1(out.data(), n64))
            .is_ok());
    check_all(out.data(), n, [&](std::size_t i) {
      return x[i] > 0 ? ref_min(ref_max(x[i], lo[i]), hi[i]) : double(x[i]) * double(lo[i]);
    });
  }
  SUBCASE("select(c, a, b) with a NaN condition selecting a") {
    ExprBuilder b;
    b.op(Op::select, b.in(0), b.in(1), b.in(2));
    REQUIRE(prepare_run(*arm, make_spec(b.done("select(c, a, b)"), {"c", "a", "b"}), ins,
                        view1(out.data(), n64))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t i) { return x[i] != 0 ? lo[i] : hi[i]; });
  }
}

TEST_CASE(
    "compilation: constant folding, shared subexpressions, trivial "
    "roots, artifacts") {
  auto arm = make_arm();
  const std::int64_t n = 3000;
  const auto xs = random_floats(n, 41);
  const auto rs = random_floats(n, 42);
  Buf<float> x(n), r(n), out(n);
  std::copy(xs.begin(), xs.end(), x.data());
  std::copy(rs.begin(), rs.end(), r.data());
  const std::vector<TensorView> ins = {view1(x.data(), n), view1(r.data(), n)};

  SUBCASE("relu(x + residual) * (x + residual) * (2 + 3), with a dead node") {
    ExprBuilder b;
    b.op(Op::exp, b.in(1));  // dead: the root does not use it
    const int s1 = b.op(Op::add, b.in(0), b.in(1));
    const int s2 = b.op(Op::add, b.in(0), b.in(1));  // the same sum, built twice
    const int k = b.op(Op::add, b.c(2.0), b.c(3.0));
    b.op(Op::mul, b.op(Op::mul, b.op(Op::relu, s1), s2), k);
    REQUIRE(prepare_run(*arm,
                        make_spec(b.done("relu(x + residual) * (x + residual) * (2 + 3)"),
                                  {"x", "residual"}),
                        ins, view1(out.data(), n))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t i) {
      const float s = xs[i] + rs[i];
      return (float(relu_d(s)) * s) * 5.0f;
    });
    std::string listing, flags;
    for (const auto& a : arm->artifacts()) {
      if (a.kind == "source") listing = a.content;
      if (a.kind == "flags") flags = a.content;
    }
    INFO(listing);
    CHECK(listing.find("= add") != std::string::npos);
    CHECK(listing.find("= add") == listing.rfind("= add"));  // one add left
    CHECK(listing.find("= exp") == std::string::npos);
    CHECK(listing.find("constant 5") != std::string::npos);
    CHECK(flags.find("-ffp-contract=off") != std::string::npos);
  }
  SUBCASE("the root is an input (a strided copy)") {
    ExprBuilder b;
    b.in(0);
    REQUIRE(prepare_run(*arm, make_spec(b.done("x"), {"x"}), {view(x.data(), {n / 2}, {2})},
                        view1(out.data(), n / 2))
                .is_ok());
    check_all(out.data(), n / 2, [&](std::size_t i) { return xs[2 * i]; });
  }
  SUBCASE("the root is a constant") {
    ExprBuilder b;
    b.op(Op::sqrt, b.c(2.0));
    REQUIRE(prepare_run(*arm, make_spec(b.done("sqrt(2)"), {"x"}), {view1(x.data(), n)},
                        view1(out.data(), n))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t) { return std::sqrt(2.0f); });
  }
  SUBCASE("constants fold in float64, as the reference computes them, rounded once") {
    // x * ((1e8 + 1) - 1e8): in float32, 1e8 + 1 rounds back to 1e8 and the factor would be 0.
    ExprBuilder b;
    const int xi = b.in(0);
    const int big = b.c(1e8);
    const int sum = b.op(Op::add, big, b.c(1.0));
    b.op(Op::mul, xi, b.op(Op::sub, sum, big));
    REQUIRE(prepare_run(*arm, make_spec(b.done("x * ((1e8 + 1) - 1e8)"), {"x"}),
                        {view1(x.data(), n)}, view1(out.data(), n))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t i) { return xs[i]; });
    // silu(2) is 1.76159415595...: the float nearest to it, not float32 arithmetic's 1 ulp below.
    ExprBuilder s;
    s.op(Op::silu, s.c(2.0));
    REQUIRE(prepare_run(*arm, make_spec(s.done("silu(2)"), {"x"}), {view1(x.data(), n)},
                        view1(out.data(), n))
                .is_ok());
    check_all(out.data(), n, [&](std::size_t) { return 2.0 * (1.0 / (1.0 + std::exp(-2.0))); });
  }
  SUBCASE("rank-0 tensors and extents of 1 with arbitrary strides") {
    REQUIRE(prepare_run(*arm, make_spec(relu_add(), {"x", "residual"}),
                        {view<float>(x.data(), {}), view<float>(r.data(), {})},
                        view<float>(out.data(), {}))
                .is_ok());
    CHECK(same(out[0], float(relu_d(double(xs[0]) + double(rs[0])))));
    CHECK(bits(out[1]) == Buf<float>::poison_bits());
    out.poison();
    // Shape (1, 6, 1): the strides of the extents of 1 are never used.
    REQUIRE(prepare_run(*arm, make_spec(relu_add(), {"x", "residual"}),
                        {view(x.data(), {1, 6, 1}, {999, 1, -7}), view(r.data(), {1, 6, 1})},
                        view(out.data(), {1, 6, 1}, {0, 1, 0}))
                .is_ok());
    check_all(out.data(), 6, [&](std::size_t i) { return relu_d(double(xs[i]) + double(rs[i])); });
    CHECK(bits(out[6]) == Buf<float>::poison_bits());
  }
}

TEST_CASE("aliasing: refused unless may_alias allows an exact alias") {
  auto arm = make_arm();
  const std::int64_t n = 40000;
  const auto xs = random_floats(n + 1, 51);
  const auto rs = random_floats(n + 1, 52);
  Buf<float> x(n + 1), r(n + 1);
  auto reset = [&] {
    std::copy(xs.begin(), xs.end(), x.data());
    std::copy(rs.begin(), rs.end(), r.data());
  };
  reset();
  auto spec = make_spec(relu_add(), {"x", "residual"});
  const std::vector<TensorView> ins = {view1(x.data(), n), view1(r.data(), n)};

  const auto refused = prepare_run(*arm, spec, ins, view1(x.data(), n));
  CHECK(refused.is_unsupported());
  CHECK(refused.message().find("overlap") != std::string::npos);
  // run() refuses too, after a good prepare.
  Buf<float> out(n);
  REQUIRE(prepare_run(*arm, spec, ins, view1(out.data(), n)).is_ok());
  TensorView alias_out = view1(x.data(), n);
  CHECK(arm->run(ins, std::span(&alias_out, 1), nullptr).is_unsupported());
  CHECK(std::equal(xs.begin(), xs.end(), x.data()));  // nothing written

  spec.outputs[0].may_alias = {"x"};
  SUBCASE("exact alias, allowed: computed in place") {
    REQUIRE(prepare_run(*arm, spec, ins, view1(x.data(), n)).is_ok());
    check_all(x.data(), n, [&](std::size_t i) { return relu_d(double(xs[i]) + double(rs[i])); });
    CHECK(x[n] == xs[n]);
  }
  SUBCASE("exact strided alias, allowed") {
    const std::vector<TensorView> sins = {view(x.data(), {n / 2}, {2}), view1(r.data(), n / 2)};
    REQUIRE(prepare_run(*arm, spec, sins, view(x.data(), {n / 2}, {2})).is_ok());
    std::size_t bad = 0;
    for (std::int64_t i = 0; i < n / 2; ++i) {
      bad += !same(x[2 * i], float(relu_d(double(xs[2 * i]) + double(rs[i]))));
      bad += bits(x[2 * i + 1]) != bits(xs[2 * i + 1]);
    }
    CHECK(bad == 0);
  }
  SUBCASE("partial overlap: always refused") {
    CHECK(prepare_run(*arm, spec, ins, view1(x.data() + 1, n)).is_unsupported());
    CHECK(std::equal(xs.begin(), xs.end(), x.data()));
  }
  SUBCASE("same pointer, other layout: refused") {
    const std::vector<TensorView> ins2 = {view(x.data(), {100, 400}), view(r.data(), {100, 400})};
    CHECK(prepare_run(*arm, spec, ins2, view(x.data(), {100, 400}, {1, 100})).is_unsupported());
  }
  SUBCASE("an input may_alias does not name: refused") {
    CHECK(prepare_run(*arm, spec, ins, view1(r.data(), n)).is_unsupported());
  }
  SUBCASE("an output whose own elements share memory: refused") {
    Buf<float> o(n);
    CHECK(prepare_run(*arm, spec, ins, view(o.data(), {n}, {0})).is_unsupported());
  }
}

TEST_CASE("refusals and errors: device, layout contract, malformed calls") {
  auto arm = make_arm();
  const std::int64_t n = 64;
  Buf<float> x(n), r(n), out(n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = r[i] = float(i);
  const auto spec = make_spec(relu_add(), {"x", "residual"});
  const std::vector<TensorView> ins = {view1(x.data(), n), view1(r.data(), n)};
  TensorView o = view1(out.data(), n);

  CHECK(arm->run(ins, std::span(&o, 1), nullptr).is_error());  // before prepare

  SUBCASE("wrong device") {
    auto cuda_in = ins;
    cuda_in[1].device = kq::Device::cuda;
    CHECK(prepare_run(*arm, spec, cuda_in, o).is_unsupported());
    REQUIRE(prepare_run(*arm, spec, ins, o).is_ok());
    CHECK(arm->run(cuda_in, std::span(&o, 1), nullptr).is_unsupported());
    TensorView cuda_out = o;
    cuda_out.device = kq::Device::cuda;
    CHECK(arm->run(ins, std::span(&cuda_out, 1), nullptr).is_unsupported());
  }
  SUBCASE("layout contract") {
    auto contiguous = spec;
    contiguous.layouts.contiguous_only = true;
    CHECK(prepare_run(*arm, contiguous, {view(x.data(), {n / 2}, {2}), view1(r.data(), n / 2)},
                      view1(out.data(), n / 2))
              .is_unsupported());
    auto rank1 = spec;
    rank1.layouts.ranks = {1};
    CHECK(prepare_run(*arm, rank1, {view(x.data(), {8, 8}), view(r.data(), {8, 8})},
                      view(out.data(), {8, 8}))
              .is_unsupported());
    TensorView misaligned =
        view1(reinterpret_cast<float*>(reinterpret_cast<char*>(x.data()) + 1), 8);
    CHECK(prepare_run(*arm, spec, {misaligned, view1(r.data(), 8)}, view1(out.data(), 8))
              .is_unsupported());
  }
  SUBCASE("malformed problems are errors") {
    CHECK(prepare_run(*arm, spec, {ins[0]}, o).is_error());                          // input count
    CHECK(prepare_run(*arm, spec, {ins[0], view1(r.data(), n - 1)}, o).is_error());  // shape
    CHECK(prepare_run(*arm, spec, {ins[0], view(r.data(), {8, 8})}, o).is_error());  // rank
    TensorView wrong_dtype = ins[1];
    wrong_dtype.dtype = DType::f64;
    CHECK(prepare_run(*arm, spec, {ins[0], wrong_dtype}, o).is_error());
    CHECK(prepare_run(*arm, spec, {ins[0], view1<float>(nullptr, n)}, o).is_error());
    kq::Problem no_spec{nullptr, ins, {o}};
    CHECK(arm->prepare(no_spec).is_error());
    REQUIRE(prepare_run(*arm, spec, ins, o).is_ok());
    CHECK(arm->run(std::span(ins.data(), 1), std::span(&o, 1), nullptr).is_error());
    CHECK(arm->run(ins, std::span<const TensorView>(), nullptr).is_error());
    auto bad_alias = spec;
    bad_alias.outputs[0].may_alias = {"nope"};
    CHECK(prepare_run(*arm, bad_alias, ins, o).is_error());
  }
}

}  // namespace

// --- half precision -------------------------------------------------------------------------

// `n` values of T spread over its whole range: normals of every binade, subnormals, zeros of
// both signs and, when `specials`, infinities and NaN.
template <class T>
std::vector<T> random_halves(std::size_t n, std::uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    x = T::from_bits(static_cast<std::uint16_t>(rng()));
    const double d = static_cast<double>(x);
    if (!specials && !std::isfinite(d)) x = T(1.5);
  }
  return v;
}

template <class T>
kq::OpSpec half_spec(kq::Expr e, std::vector<std::string> inputs, DType compute = DType::f32) {
  kq::OpSpec s = make_spec(std::move(e), std::move(inputs), dtype_of<T>());
  s.compute = compute;
  s.layouts.min_alignment_bytes = 2;
  return s;
}

// The reference for one element: the double value rounded once to T. NaN matches any NaN.
template <class T>
bool same_half(T got, double want) {
  const T w(want);
  const bool nan = std::isnan(static_cast<double>(got)) && std::isnan(want);
  return nan || got.bits == w.bits;
}

TEST_CASE_TEMPLATE("f16 and bf16: relu(x + residual) in float32, rounded once, bitwise", T,
                   kq::Half, kq::BFloat16) {
  auto arm = make_arm();
  const auto spec = half_spec<T>(relu_add(), {"x", "residual"});
  REQUIRE(arm->supports(spec).is_ok());
  for (std::size_t n : {std::size_t{1}, std::size_t{9}, std::size_t{4097}, std::size_t{100003}}) {
    CAPTURE(n);
    auto x = random_halves<T>(n, 3, true), r = random_halves<T>(n, 4, true);
    std::vector<T> out(n, T::from_bits(0x7e5a));
    REQUIRE(prepare_run(*arm, spec, {view1(x.data(), n), view1(r.data(), n)}, view1(out.data(), n))
                .is_ok());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i)
      bad += !same_half(out[i], relu_d(static_cast<double>(x[i]) + static_cast<double>(r[i])));
    CHECK(bad == 0);
  }
}

TEST_CASE("f16 specials: ties to even, overflow to inf, NaN, -0, subnormal sums") {
  auto arm = make_arm();
  const auto spec = half_spec<kq::Half>(relu_add(), {"x", "residual"});
  const double ulp1 = std::ldexp(1.0, -10), tiny = std::ldexp(1.0, -24);
  const std::vector<std::pair<double, double>> in = {
      {1.0, ulp1 / 2},         // a tie: stays at 1 (even)
      {1.0 + ulp1, ulp1 / 2},  // a tie: goes up to 1 + 2 ulp (even)
      {65504.0, 65504.0},      // overflow: +inf
      {65504.0, 8.0},          // below half an ulp past the largest: stays 65504
      {-0.0, 0.0},             // +0
      {-1.0, 0.5},             // negative: +0
      {tiny, tiny},            // subnormal sum, exact
      {std::nan(""), 1.0},     // NaN
      {-INFINITY, 1.0},        // +0
      {INFINITY, -INFINITY}};  // NaN
  const std::size_t n = in.size();
  std::vector<kq::Half> x(n), r(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = kq::Half(in[i].first);
    r[i] = kq::Half(in[i].second);
  }
  REQUIRE(prepare_run(*arm, spec, {view1(x.data(), n), view1(r.data(), n)}, view1(out.data(), n))
              .is_ok());
  const std::vector<double> want = {1.0, 1.0 + 2 * ulp1, INFINITY, 65504.0, 0.0,
                                    0.0, 2 * tiny,       NAN,      0.0,     NAN};
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(same_half(out[i], want[i]));
  }
}

TEST_CASE("bf16 computes in spec.compute: (x + y) - x is 0 in float32, y in float64") {
  auto arm = make_arm();
  ExprBuilder b;
  b.op(Op::sub, b.op(Op::add, b.in(0), b.in(1)), b.in(0));
  const kq::Expr e = b.done("(x + y) - x");
  const double y = std::ldexp(1.0, -30);  // exact in bf16, lost in 1 + y in float32
  std::vector<kq::BFloat16> xs(5, kq::BFloat16(1.0)), ys(5, kq::BFloat16(y)), out(5);
  REQUIRE(prepare_run(*arm, half_spec<kq::BFloat16>(e, {"x", "y"}, DType::f32),
                      {view1(xs.data(), 5), view1(ys.data(), 5)}, view1(out.data(), 5))
              .is_ok());
  CHECK(static_cast<double>(out[4]) == 0.0);
  REQUIRE(prepare_run(*arm, half_spec<kq::BFloat16>(e, {"x", "y"}, DType::f64),
                      {view1(xs.data(), 5), view1(ys.data(), 5)}, view1(out.data(), 5))
              .is_ok());
  CHECK(static_cast<double>(out[4]) == y);
  // A compute type narrower than float32 is not this arm's.
  CHECK(arm->supports(half_spec<kq::BFloat16>(e, {"x", "y"}, DType::bf16)).is_unsupported());
}

TEST_CASE("bf16 silu(x) * y: within 1 ulp of the correctly rounded value") {
  auto arm = make_arm();
  ExprBuilder b;
  b.op(Op::mul, b.op(Op::silu, b.in(0)), b.in(1));
  const auto spec = half_spec<kq::BFloat16>(b.done("silu(x) * y"), {"x", "y"});
  const std::size_t n = 20000;
  std::vector<kq::BFloat16> x(n), y(n), out(n);
  std::mt19937 rng(9);
  std::normal_distribution<double> d(0.0, 4.0);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = kq::BFloat16(d(rng));
    y[i] = kq::BFloat16(d(rng));
  }
  REQUIRE(prepare_run(*arm, spec, {view1(x.data(), n), view1(y.data(), n)}, view1(out.data(), n))
              .is_ok());
  std::size_t exact = 0, off = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double xd = static_cast<double>(x[i]);
    const kq::BFloat16 want(xd / (1.0 + std::exp(-xd)) * static_cast<double>(y[i]));
    const int dist = std::abs(static_cast<int>(out[i].bits) - static_cast<int>(want.bits));
    exact += dist == 0;
    off += dist > 1 && (out[i].bits ^ want.bits) != 0x8000;  // +0 and -0 are one value here
  }
  CHECK(off == 0);
  CHECK(exact >= n - n / 100);  // 1 ulp only next to a tie
}

TEST_CASE("half views: strided, transposed and broadcast inputs, a strided output, offsets") {
  auto arm = make_arm();
  using T = kq::BFloat16;
  const auto spec = half_spec<T>(relu_add(), {"x", "residual"});
  const std::int64_t R = 131, C = 157;  // 20567 elements: the parallel path
  auto xt = random_halves<T>(R * C, 41, false);
  auto bias = random_halves<T>(C, 42, false);
  std::vector<T> out(2 * R * C + 1, T::from_bits(0x7e5a));
  // x(i, j) = xt[j * R + i]; residual(i, j) = bias[j] (stride 0 on rows); out(i, j) at
  // out[1 + 2 * (i * C + j)]: every other element, one element (2 bytes) past the start.
  REQUIRE(prepare_run(*arm, spec,
                      {view(xt.data(), {R, C}, {1, R}), view(bias.data(), {R, C}, {0, 1})},
                      view(out.data() + 1, {R, C}, {2 * C, 2}))
              .is_ok());
  std::size_t bad = 0;
  for (std::int64_t i = 0; i < R; ++i)
    for (std::int64_t j = 0; j < C; ++j) {
      const double want = relu_d(static_cast<double>(xt[j * R + i]) + static_cast<double>(bias[j]));
      bad += !same_half(out[1 + 2 * (i * C + j)], want);
      bad += out[2 + 2 * (i * C + j)].bits != 0x7e5a;  // gaps untouched
    }
  CHECK(bad == 0);
  CHECK(out[0].bits == 0x7e5a);

  // An odd address is not aligned to a 2-byte element: refused.
  auto* odd = reinterpret_cast<T*>(reinterpret_cast<char*>(out.data()) + 1);
  CHECK(prepare_run(*arm, spec, {view1(xt.data(), 4), view1(xt.data() + 4, 4)}, view1(odd, 4))
            .is_unsupported());
}

TEST_CASE("the source artifact says how half elements are converted") {
  auto arm = make_arm();
  std::vector<kq::Half> x(4), r(4), out(4);
  REQUIRE(prepare_run(*arm, half_spec<kq::Half>(relu_add(), {"x", "residual"}),
                      {view1(x.data(), 4), view1(r.data(), 4)}, view1(out.data(), 4))
              .is_ok());
  std::string listing;
  for (const auto& a : arm->artifacts())
    if (a.kind == "source") listing = a.content;
  CHECK(listing.find("# elements: f16, widened exactly to f32 on load, rounded once to nearest "
                     "even on store") == 0);
  CHECK(listing.find("arithmetic: float32") != std::string::npos);
}
