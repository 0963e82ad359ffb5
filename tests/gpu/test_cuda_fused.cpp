// GPU tests of the cuda_fused, inline_ptx and thrust_transform plugins: every arm on
// residual_relu over awkward sizes and pointer offsets, compared bit for bit with a float64
// reference rounded once to float (signed zeros included; NaN and inf on the ieee spec), with
// guard zones checked; silu_mul and leaky_relu at one size within their tolerance; refusal of
// ops an arm does not implement. Plugins are loaded with kq's loader, specs built by hand.
// Without a usable CUDA device the test's main says why and skips (tests/support/gpu_main.cpp);
// built without CUDA (kq_core defines KQ_HAVE_CUDA when it links the CUDA runtime) the file is
// one case saying so.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("cuda_fused, inline_ptx and thrust_transform arms") {
  MESSAGE("skipped: no CUDA device (kq was built without CUDA)");
}
#else
#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "expr_nodes.hpp"
#include "fused_arms.hpp"
#include "kq/plugin_api.hpp"

namespace {

kq::IKernelArm* arm(const std::string& name) { return kq::test::fused_arm(name); }

using kq::test::leaf_constant;
using kq::test::leaf_input;
using kq::test::node;

kq::OpSpec residual_relu_spec(kq::Domain domain) {
  kq::OpSpec s;
  s.op = "residual_relu";
  s.inputs = {"x", "residual"};
  s.outputs = {{"out", {}}};
  s.semantics.text = "relu(x + residual)";
  s.semantics.nodes = {leaf_input(0), leaf_input(1), node(kq::Op::add, 0, 1),
                       node(kq::Op::relu, 2)};
  s.domain = domain;
  s.layouts = {true, 4, {1, 2, 3, 4}};
  return s;
}

kq::OpSpec silu_mul_spec() {
  kq::OpSpec s;
  s.op = "silu_mul";
  s.inputs = {"x", "y"};
  s.outputs = {{"out", {"x", "y"}}};
  s.semantics.text = "silu(x) * y";
  s.semantics.nodes = {leaf_input(0), node(kq::Op::silu, 0), leaf_input(1),
                       node(kq::Op::mul, 1, 2)};
  s.layouts = {true, 16, {1, 2}};
  return s;
}

kq::OpSpec leaky_relu_spec() {
  kq::OpSpec s;
  s.op = "leaky_relu";
  s.inputs = {"x"};
  s.outputs = {{"out", {"x"}}};
  s.semantics.text = "select(x > 0, x, 0.01 * x)";
  s.semantics.nodes = {leaf_input(0),           leaf_constant(0.0),
                       node(kq::Op::gt, 0, 1),  leaf_input(0),
                       leaf_constant(0.01),     leaf_input(0),
                       node(kq::Op::mul, 4, 5), node(kq::Op::select, 2, 3, 6)};
  s.layouts = {false, 4, {1, 2, 3, 4, 5, 6, 7, 8}};
  return s;
}

kq::OpSpec gelu_spec() {
  kq::OpSpec s;
  s.op = "gelu";
  s.inputs = {"x"};
  s.outputs = {{"out", {}}};
  s.semantics.text = "gelu(x)";
  s.semantics.nodes = {leaf_input(0), node(kq::Op::gelu, 0)};
  return s;
}

float ref_residual_relu(float x, float r) {
  const double s = static_cast<double>(x) + static_cast<double>(r);
  if (std::isnan(s)) return static_cast<float>(s);
  return static_cast<float>(s > 0.0 ? s : 0.0);
}

float ref_silu_mul(float x, float y) {
  const double xd = x;
  return static_cast<float>(xd * (1.0 / (1.0 + std::exp(-xd))) * static_cast<double>(y));
}

float ref_leaky(float x) {
  const double xd = x;
  return static_cast<float>(xd > 0.0 ? xd : 0.01 * xd);
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// The bitwise rule: equal bit patterns, or NaN where NaN is expected (payloads are free).
bool same(float want, float got) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  return bits(want) == bits(got);
}

std::int64_t ulp_distance(float a, float b) {
  auto ordered = [](float f) {
    const std::int64_t mag = bits(f) & 0x7fffffffu;
    return (bits(f) >> 31) ? -mag : mag;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Finite values that stress the formula: signed zeros, exact cancellation, subnormals, and
// (ieee only) NaN and infinities.
std::vector<float> make_values(std::size_t n, int which, bool ieee, std::uint32_t seed) {
  std::mt19937 rng(seed + 7919u * static_cast<std::uint32_t>(which));
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 11) {
      case 3:
        v[i] = -0.0f;
        break;
      case 5:
        v[i] = which == 0 ? 1e-40f : -1e-40f;
        break;
      case 7:
        v[i] = which == 0 ? 0.75f : -0.75f;
        break;  // x + r == +0 exactly
      case 9:
        v[i] = ieee ? (which == 0 ? std::numeric_limits<float>::quiet_NaN()
                                  : std::numeric_limits<float>::infinity())
                    : u(rng);
        break;
      case 10:
        v[i] = ieee ? (which == 0 ? -std::numeric_limits<float>::infinity() : u(rng)) : u(rng);
        break;
      default:
        v[i] = u(rng);
    }
  }
  if (ieee && n > 2)
    v[n - 2] = which == 0 ? std::numeric_limits<float>::infinity()
                          : -std::numeric_limits<float>::infinity();  // NaN
  return v;
}

kq::TensorView view(float* p, std::int64_t n) {
  return kq::TensorView::contiguous_1d(p, n, kq::DType::f32, kq::Device::cuda);
}

// Device buffers with room for the largest size and offset; out is poisoned before every run.
struct Buffers {
  static constexpr std::size_t kPad = 64;
  std::size_t cap = 0;
  float* x = nullptr;
  float* r = nullptr;
  float* out = nullptr;
  cudaStream_t stream = nullptr;
  explicit Buffers(std::size_t n) : cap(n + kPad) {
    CUDA_OK(cudaMalloc(&x, cap * sizeof(float)));
    CUDA_OK(cudaMalloc(&r, cap * sizeof(float)));
    CUDA_OK(cudaMalloc(&out, cap * sizeof(float)));
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(r);
    cudaFree(out);
    if (stream) cudaStreamDestroy(stream);
  }
};

// Runs `a` on residual_relu over n elements at element offsets (ox, orr, oo) and checks every
// output bit and that nothing outside [oo, oo + n) was written.
void check_residual_relu(kq::IKernelArm& a, const kq::OpSpec& spec, Buffers& b, std::int64_t n,
                         int ox, int orr, int oo) {
  const bool ieee = spec.domain == kq::Domain::ieee;
  const auto hx = make_values(static_cast<std::size_t>(n), 0, ieee, static_cast<std::uint32_t>(n));
  const auto hr = make_values(static_cast<std::size_t>(n), 1, ieee, static_cast<std::uint32_t>(n));
  CUDA_OK(cudaMemcpy(b.x + ox, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(b.r + orr, hr.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(b.out, 0xff, b.cap * sizeof(float)));  // poison: NaN 0xffffffff

  const kq::TensorView in[2] = {view(b.x + ox, n), view(b.r + orr, n)};
  const kq::TensorView out[1] = {view(b.out + oo, n)};
  kq::Problem p{&spec, {in[0], in[1]}, {out[0]}};
  const std::string where = a.identity().name + " n=" + std::to_string(n) + " offsets " +
                            std::to_string(ox) + "," + std::to_string(orr) + "," +
                            std::to_string(oo);
  kq::Status s = a.prepare(p);
  REQUIRE_MESSAGE(s.is_ok(), where << ": prepare: " << s.message());
  s = a.run(in, out, b.stream);
  REQUIRE_MESSAGE(s.is_ok(), where << ": run: " << s.message());
  CUDA_OK(cudaStreamSynchronize(b.stream));
  CUDA_OK(cudaGetLastError());

  std::vector<float> got(b.cap);
  CUDA_OK(cudaMemcpy(got.data(), b.out, b.cap * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < b.cap; ++i) {
    const auto j = static_cast<std::int64_t>(i) - oo;
    if (j < 0 || j >= n) {
      if (bits(got[i]) != 0xffffffffu) {
        FAIL_CHECK(where << ": wrote outside the output at buffer index " << i);
        return;
      }
      continue;
    }
    const float want = ref_residual_relu(hx[j], hr[j]);
    if (!same(want, got[i])) {
      FAIL_CHECK(where << ": element " << j << ": x=" << hx[j] << " r=" << hr[j] << " want 0x"
                       << std::hex << bits(want) << " got 0x" << bits(got[i]));
      return;
    }
  }
}

const std::vector<std::string> kResidualReluArms = {"cuda_fused_residual_relu_v4_b1024",
                                                    "cuda_fused_residual_relu_v4x2_b1024",
                                                    "cuda_fused_residual_relu_v4_b256",
                                                    "cuda_fused_residual_relu_v4x4_b256",
                                                    "cuda_fused_residual_relu_scalar_b256",
                                                    "inline_ptx_residual_relu",
                                                    "thrust_residual_relu"};

}  // namespace

TEST_CASE("every residual_relu arm matches the reference bit for bit at every size and offset") {
  const std::vector<std::int64_t> sizes = {0, 1, 3, 4, 5, 1023, 4097, 1 << 20, (1 << 20) + 3};
  // Equal offsets keep a common vector path (after a head); unequal ones force the scalar one.
  const int offsets[][3] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3},
                            {1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {3, 1, 2}};
  Buffers b((1 << 20) + 3);
  for (kq::Domain domain : {kq::Domain::finite, kq::Domain::ieee}) {
    const kq::OpSpec spec = residual_relu_spec(domain);
    for (const std::string& name : kResidualReluArms) {
      kq::IKernelArm* a = arm(name);
      REQUIRE_MESSAGE(a != nullptr, "arm " << name << " not exported");
      REQUIRE_MESSAGE(a->supports(spec).is_ok(), name << ": " << a->supports(spec).message());
      for (std::int64_t n : sizes)
        for (const auto& o : offsets) check_residual_relu(*a, spec, b, n, o[0], o[1], o[2]);
    }
  }
}

TEST_CASE("a rank-2 contiguous view is one flat range") {
  const kq::OpSpec spec = residual_relu_spec(kq::Domain::finite);
  Buffers b(33 * 65);
  std::vector<float> hx = make_values(33 * 65, 0, false, 1), hr = make_values(33 * 65, 1, false, 1);
  CUDA_OK(cudaMemcpy(b.x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(b.r, hr.data(), hr.size() * sizeof(float), cudaMemcpyHostToDevice));
  auto v2 = [](float* p) {
    kq::TensorView v = view(p, 33 * 65);
    v.rank = 2;
    v.shape = {33, 65};
    v.strides = {65, 1};
    return v;
  };
  for (const std::string& name : kResidualReluArms) {
    kq::IKernelArm* a = arm(name);
    REQUIRE(a != nullptr);
    const kq::TensorView in[2] = {v2(b.x), v2(b.r)};
    const kq::TensorView out[1] = {v2(b.out)};
    REQUIRE(a->prepare(kq::Problem{&spec, {in[0], in[1]}, {out[0]}}).is_ok());
    REQUIRE(a->run(in, out, b.stream).is_ok());
    CUDA_OK(cudaStreamSynchronize(b.stream));
    std::vector<float> got(hx.size());
    CUDA_OK(cudaMemcpy(got.data(), b.out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!same(ref_residual_relu(hx[i], hr[i]), got[i])) {
        FAIL_CHECK(name << ": element " << i);
        break;
      }
  }
}

TEST_CASE("silu_mul arms are within 4 ulp of the reference, in place too") {
  const kq::OpSpec spec = silu_mul_spec();
  const std::int64_t n = 4099;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ux(-10.0f, 10.0f), uy(-4.0f, 4.0f);
  std::vector<float> hx(n), hy(n);
  for (std::int64_t i = 0; i < n; ++i) {
    hx[i] = i % 13 == 0 ? -0.0f : ux(rng);
    hy[i] = uy(rng);
  }
  Buffers b(n);
  for (const std::string name : {"cuda_fused_silu_mul_v4_b1024", "cuda_fused_silu_mul_v4x2_b1024",
                                 "cuda_fused_silu_mul_v4_b256", "cuda_fused_silu_mul_v4x4_b256",
                                 "cuda_fused_silu_mul_scalar_b256", "thrust_silu_mul"}) {
    kq::IKernelArm* a = arm(name);
    REQUIRE_MESSAGE(a != nullptr, "arm " << name << " not exported");
    REQUIRE_MESSAGE(a->supports(spec).is_ok(), name << ": " << a->supports(spec).message());
    for (bool in_place : {false, true}) {
      CUDA_OK(cudaMemcpy(b.x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(b.r, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemset(b.out, 0xff, b.cap * sizeof(float)));
      float* dst = in_place ? b.x : b.out;
      const kq::TensorView in[2] = {view(b.x, n), view(b.r, n)};
      const kq::TensorView out[1] = {view(dst, n)};
      REQUIRE(a->prepare(kq::Problem{&spec, {in[0], in[1]}, {out[0]}}).is_ok());
      kq::Status s = a->run(in, out, b.stream);
      REQUIRE_MESSAGE(s.is_ok(), name << ": " << s.message());
      CUDA_OK(cudaStreamSynchronize(b.stream));
      std::vector<float> got(n);
      CUDA_OK(cudaMemcpy(got.data(), dst, n * sizeof(float), cudaMemcpyDeviceToHost));
      std::int64_t worst = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const float want = ref_silu_mul(hx[i], hy[i]);
        const std::int64_t d = ulp_distance(want, got[i]);
        if (d > worst) worst = d;
        if (d > 4) {
          FAIL_CHECK(name << std::string(in_place ? " in place" : "") << ": element " << i
                          << " x=" << hx[i] << " y=" << hy[i] << " want " << want << " got "
                          << got[i] << " (" << d << " ulp)");
          break;
        }
      }
      MESSAGE(name << std::string(in_place ? " in place" : "") << ": worst " << worst << " ulp");
    }
  }
}

TEST_CASE("leaky_relu arms match the double-rounded reference, strided and in place too") {
  const kq::OpSpec spec = leaky_relu_spec();
  const std::int64_t rows = 33, cols = 65, n = rows * cols;  // 2145: a 1-element tail after float4
  std::vector<float> hx = make_values(n, 0, false, 5);
  for (std::int64_t i = 0; i < n; i += 17) hx[i] *= 1e30f;  // products far from 0.01f's rounding
  Buffers b(n);
  for (const std::string name :
       {"cuda_fused_leaky_relu_v4_b1024", "cuda_fused_leaky_relu_v4x2_b1024",
        "cuda_fused_leaky_relu_v4_b256", "cuda_fused_leaky_relu_v4x4_b256",
        "cuda_fused_leaky_relu_scalar_b256"}) {
    kq::IKernelArm* a = arm(name);
    REQUIRE_MESSAGE(a != nullptr, "arm " << name << " not exported");
    REQUIRE_MESSAGE(a->supports(spec).is_ok(), name << ": " << a->supports(spec).message());
    // 0: contiguous; 1: in place; 2: the output transposed (strides {1, rows}).
    for (int mode : {0, 1, 2}) {
      CUDA_OK(cudaMemcpy(b.x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemset(b.out, 0xff, b.cap * sizeof(float)));
      float* dst = mode == 1 ? b.x : b.out;
      kq::TensorView in = view(b.x, n), out = view(dst, n);
      in.rank = out.rank = 2;
      in.shape = out.shape = {rows, cols};
      in.strides = {cols, 1};
      out.strides = mode == 2 ? decltype(out.strides){1, rows} : decltype(out.strides){cols, 1};
      const kq::TensorView ins[1] = {in};
      const kq::TensorView outs[1] = {out};
      REQUIRE(a->prepare(kq::Problem{&spec, {in}, {out}}).is_ok());
      kq::Status s = a->run(ins, outs, b.stream);
      REQUIRE_MESSAGE(s.is_ok(), name << " mode " << mode << ": " << s.message());
      CUDA_OK(cudaStreamSynchronize(b.stream));
      std::vector<float> got(n);
      CUDA_OK(cudaMemcpy(got.data(), dst, n * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          const float want = ref_leaky(hx[i * cols + j]);
          const float g = got[mode == 2 ? j * rows + i : i * cols + j];
          // The spec allows 1 ulp; these arms round the double product once, like the reference.
          if (!same(want, g)) {
            FAIL_CHECK(name << " mode " << mode << ": element (" << i << ", " << j << ") want "
                            << want << " got " << g);
            i = rows;
            break;
          }
        }
    }
  }
}

TEST_CASE("arms refuse the ops they do not implement") {
  const kq::OpSpec rr = residual_relu_spec(kq::Domain::finite), silu = silu_mul_spec(),
                   leaky = leaky_relu_spec(), gelu = gelu_spec();
  kq::OpSpec rr_f64 = rr;
  rr_f64.dtype = kq::DType::f64;
  kq::OpSpec commuted = rr;  // relu(residual + x): equivalent, but not the structure matched
  commuted.semantics.nodes = {leaf_input(1), leaf_input(0), node(kq::Op::add, 0, 1),
                              node(kq::Op::relu, 2)};
  std::map<std::string, std::vector<const kq::OpSpec*> > refused = {
      {"cuda_fused_residual_relu_v4_b1024", {&silu, &leaky, &gelu, &rr_f64, &commuted}},
      {"cuda_fused_silu_mul_v4x4_b256", {&rr, &leaky, &gelu}},
      {"cuda_fused_leaky_relu_scalar_b256", {&rr, &silu, &gelu}},
      {"inline_ptx_residual_relu", {&silu, &leaky, &gelu, &rr_f64}},
      {"thrust_residual_relu", {&silu, &leaky, &gelu}},
      {"thrust_silu_mul", {&rr, &leaky, &gelu}}};
  for (const auto& [name, specs] : refused) {
    kq::IKernelArm* a = arm(name);
    REQUIRE_MESSAGE(a != nullptr, "arm " << name << " not exported");
    for (const kq::OpSpec* s : specs) {
      const kq::Status st = a->supports(*s);
      CHECK_MESSAGE(st.is_unsupported(),
                    name << " on " << s->semantics.text << ": " << kq::to_string(st.code()));
      CHECK_FALSE(st.message().empty());
    }
  }
  // inline_ptx refuses an in-place spec: its .nc loads need inputs nothing writes.
  kq::OpSpec in_place = rr;
  in_place.outputs[0].may_alias = {"x"};
  CHECK(arm("inline_ptx_residual_relu")->supports(in_place).is_unsupported());
}

#endif  // KQ_HAVE_CUDA
