// GPU tests of the hand-written CUDA arms in half precision (cuda_fused, inline_ptx,
// thrust_transform on f16 and bf16): residual_relu bit for bit against the float64 reference
// rounded once to the dtype (ties that tell nearest-even from truncation, subnormals, signed
// zeros; NaN, infinities and overflow in f16's ieee domain) over sizes around the 8-element
// vector and element offsets that break 16-byte alignment, with guard zones checked; silu_mul
// in bf16 within 1 ulp, in place too; the f32-only variants refuse half specs. Skips without a
// usable CUDA device (tests/support/gpu_main.cpp); built without CUDA, one case saying so.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("half-precision CUDA arms") {
  MESSAGE("skipped: no CUDA device (kq was built without CUDA)");
}
#else
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "expr_nodes.hpp"
#include "fused_arms.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"

namespace {

using kq::DType;
using kq::test::leaf_input;
using kq::test::node;

kq::IKernelArm* arm(const std::string& name) { return kq::test::fused_arm(name); }

kq::OpSpec half_spec(DType t, bool silu) {
  kq::OpSpec s;
  s.op = silu ? "silu_mul" : "residual_relu";
  s.dtype = t;
  s.compute = DType::f32;
  s.inputs = {"x", silu ? "y" : "residual"};
  s.outputs = {{"out", silu ? std::vector<std::string>{"x", "y"} : std::vector<std::string>{}}};
  s.semantics.text = silu ? "silu(x) * y" : "relu(x + residual)";
  if (silu)
    s.semantics.nodes = {leaf_input(0), node(kq::Op::silu, 0), leaf_input(1),
                         node(kq::Op::mul, 1, 2)};
  else
    s.semantics.nodes = {leaf_input(0), leaf_input(1), node(kq::Op::add, 0, 1),
                         node(kq::Op::relu, 2)};
  s.domain = t == DType::f16 && !silu ? kq::Domain::ieee : kq::Domain::finite;
  s.layouts = {true, 2, {1, 2, 3, 4}};
  return s;
}

double lim(DType t, int which) {  // 0 max, 1 smallest normal, 2 smallest subnormal
  return t == DType::f16 ? which == 0   ? 65504.0
                           : which == 1 ? 0x1p-14
                                        : 0x1p-24
         : which == 0    ? static_cast<double>(std::numeric_limits<kq::BFloat16>::max())
         : which == 1    ? 0x1p-126
                         : 0x1p-133;
}

// Input `which` (0 or 1) of element i: ordinary values, ties (x + half an ulp of x: exactly
// between two neighbours), subnormals and their sums, signed zeros, exact cancellation; with
// `ieee`, NaN, infinities and sums that overflow.
double value(DType t, int which, std::size_t i, bool ieee, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  const int digits = t == DType::f16 ? 11 : 8;
  const double base = 1.0 + static_cast<double>(i % 64) / 64.0;  // the tie's x, exact in both
  switch (i % 13) {
    case 1:
      return which == 0 ? base : std::ldexp(i % 2 ? 1.5 : 0.5, 1 - digits);  // x + tie
    case 2:
      return which == 0 ? -0.0 : (i % 2 ? -0.0 : 0.0);
    case 3:
      return lim(t, 2) * static_cast<double>(1 + i % 5) * (which ? -1 : 1) * (i % 3 ? 1 : -1);
    case 4:
      return which == 0 ? 0.75 : -0.75;  // x + r = +0
    case 5:
      return lim(t, 1) * (which ? -0.5 : 0.75);
    case 6:
      return ieee ? (which == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0) : u(rng);
    case 7:
      return ieee ? (which == 0 ? std::numeric_limits<double>::infinity() : u(rng)) : u(rng);
    case 8:
      return ieee ? lim(t, 0) * 0.75 : u(rng);  // both inputs: the sum overflows to inf
    default:
      return u(rng);
  }
}

std::uint16_t bits_of(DType t, double v) {
  std::uint16_t b;
  kq::store_rounded(t, v, &b);
  return b;
}
double of_bits(DType t, std::uint16_t b) { return kq::load_as_double(t, &b); }
bool is_nan_bits(DType t, std::uint16_t b) { return std::isnan(of_bits(t, b)); }

std::int64_t ulps(std::uint16_t a, std::uint16_t b) {
  auto ordered = [](std::uint16_t v) -> std::int64_t {
    const std::int64_t mag = v & 0x7fff;
    return (v >> 15) ? -mag : mag;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

struct Buffers {
  static constexpr std::size_t kPad = 64;
  std::size_t cap;
  std::uint16_t* x = nullptr;
  std::uint16_t* y = nullptr;
  std::uint16_t* out = nullptr;
  cudaStream_t stream = nullptr;
  explicit Buffers(std::size_t n) : cap(n + kPad) {
    CUDA_OK(cudaMalloc(&x, cap * 2));
    CUDA_OK(cudaMalloc(&y, cap * 2));
    CUDA_OK(cudaMalloc(&out, cap * 2));
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(out);
    if (stream) cudaStreamDestroy(stream);
  }
};

kq::TensorView view(std::uint16_t* p, std::int64_t n, DType t) {
  return kq::TensorView::contiguous_1d(p, n, t, kq::Device::cuda);
}

// Runs arm `name` on n elements at element offsets o[3] (o[2] < 0: in place on x) and checks
// every element (bitwise for residual_relu, 1 ulp for silu_mul) and the guard zones.
void check(const std::string& name, DType t, bool silu, Buffers& b, std::int64_t n,
           const int (&o)[3]) {
  kq::IKernelArm* a = arm(name);
  REQUIRE_MESSAGE(a != nullptr, "arm " << name << " not exported");
  const kq::OpSpec spec = half_spec(t, silu);
  REQUIRE_MESSAGE(a->supports(spec).is_ok(), name << ": " << a->supports(spec).message());
  const bool ieee = spec.domain == kq::Domain::ieee, in_place = o[2] < 0;
  std::mt19937 rng(static_cast<std::uint32_t>(n) * 31u + (silu ? 7u : 0u));
  std::vector<std::uint16_t> hx(n), hy(n);
  for (std::int64_t i = 0; i < n; ++i) {
    hx[i] = bits_of(t, value(t, 0, static_cast<std::size_t>(i), ieee, rng));
    hy[i] = bits_of(t, value(t, 1, static_cast<std::size_t>(i), ieee, rng));
  }
  CUDA_OK(cudaMemset(b.out, 0xff, b.cap * 2));  // poison: NaN in both types
  CUDA_OK(cudaMemset(b.x, 0xff, b.cap * 2));
  CUDA_OK(cudaMemcpy(b.x + o[0], hx.data(), n * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(b.y + o[1], hy.data(), n * 2, cudaMemcpyHostToDevice));
  std::uint16_t* out = in_place ? b.x + o[0] : b.out + o[2];
  const kq::TensorView in[2] = {view(b.x + o[0], n, t), view(b.y + o[1], n, t)};
  const kq::TensorView outs[1] = {view(out, n, t)};
  const std::string where = name + " " + std::string(kq::to_string(t)) + " n=" + std::to_string(n) +
                            " offsets " + std::to_string(o[0]) + "," + std::to_string(o[1]) + "," +
                            std::to_string(o[2]);
  kq::Status s = a->prepare(kq::Problem{&spec, {in[0], in[1]}, {outs[0]}});
  REQUIRE_MESSAGE(s.is_ok(), where << ": prepare: " << s.message());
  s = a->run(in, outs, b.stream);
  REQUIRE_MESSAGE(s.is_ok(), where << ": run: " << s.message());
  CUDA_OK(cudaStreamSynchronize(b.stream));

  std::vector<std::uint16_t> got(b.cap);
  CUDA_OK(cudaMemcpy(got.data(), in_place ? b.x : b.out, b.cap * 2, cudaMemcpyDeviceToHost));
  const std::int64_t start = in_place ? o[0] : o[2];
  for (std::size_t k = 0; k < b.cap; ++k) {
    const std::int64_t i = static_cast<std::int64_t>(k) - start;
    if (i < 0 || i >= n) {
      if (got[k] != 0xffff) {
        FAIL_CHECK(where << ": wrote outside the output at buffer index " << k);
        return;
      }
      continue;
    }
    const double xv = of_bits(t, hx[i]), yv = of_bits(t, hy[i]);
    double want;
    if (silu) {
      want = xv * (1.0 / (1.0 + std::exp(-xv))) * yv;
    } else {
      const double sum = xv + yv;
      want = std::isnan(sum) ? sum : sum > 0.0 ? sum : 0.0;
    }
    const std::uint16_t w = bits_of(t, want);
    const bool ok =
        is_nan_bits(t, w) ? is_nan_bits(t, got[k]) : (silu ? ulps(w, got[k]) <= 1 : w == got[k]);
    if (!ok) {
      FAIL_CHECK(where << ": element " << i << ": x=" << xv << " y=" << yv << " want 0x" << std::hex
                       << w << " got 0x" << got[k]);
      return;
    }
  }
}

const std::int64_t kSizes[] = {1, 3, 7, 8, 9, 31, 33, 4097, (1 << 20) + 3};
// Equal offsets keep the 16-byte path after a head (1 and 7 elements: 2 and 14 bytes); unequal
// ones take the scalar path.
const int kOffsets[][3] = {{0, 0, 0}, {1, 1, 1}, {7, 7, 7}, {1, 0, 0}, {0, 3, 5}};

}  // namespace

TEST_CASE("residual_relu in f16 and bf16: every half arm matches the reference bit for bit") {
  Buffers b((1 << 20) + 3);
  for (DType t : {DType::f16, DType::bf16})
    for (const char* name :
         {"cuda_fused_residual_relu_v4_b1024", "cuda_fused_residual_relu_v4_b256",
          "cuda_fused_residual_relu_scalar_b256", "inline_ptx_residual_relu",
          "thrust_residual_relu"})
      for (std::int64_t n : kSizes)
        for (const auto& o : kOffsets) check(name, t, false, b, n, o);
}

TEST_CASE("silu_mul in bf16: within 1 ulp, out of place and in place") {
  Buffers b((1 << 20) + 3);
  const int in_place[3] = {1, 1, -1};
  for (const char* name : {"cuda_fused_silu_mul_v4_b1024", "cuda_fused_silu_mul_v4_b256",
                           "cuda_fused_silu_mul_scalar_b256", "thrust_silu_mul"})
    for (std::int64_t n : kSizes) {
      for (const auto& o : kOffsets) check(name, DType::bf16, true, b, n, o);
      check(name, DType::bf16, true, b, n, in_place);
    }
}

TEST_CASE("the f32-only variants refuse half specs, saying which variants take them") {
  for (const char* name :
       {"cuda_fused_residual_relu_v4x2_b1024", "cuda_fused_residual_relu_v4x4_b256",
        "cuda_fused_silu_mul_v4x2_b1024"}) {
    kq::IKernelArm* a = arm(name);
    REQUIRE(a != nullptr);
    const kq::Status s =
        a->supports(half_spec(DType::bf16, std::string(name).find("silu") != std::string::npos));
    CHECK(s.is_unsupported());
    CHECK(s.message().find("v4_b1024") != std::string::npos);
  }
}

#endif
