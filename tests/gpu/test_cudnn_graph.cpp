// GPU tests of the cudnn_pointwise arm (plugins/cudnn_graph), loaded with kq's loader as the host
// loads it. Without a usable CUDA device the test's main skips, saying why. The full
// qualification is kq's; these check residual_relu bit for bit against a float64 reference at a
// few sizes (divisible or not by the channel counts the shapings use), the special values kq
// defines (relu(-0) = +0, NaN propagation, infinities), a few other expressions within a loose
// ulp bound, and the refusals.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("cudnn_pointwise arm") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "expr_nodes.hpp"
#include "kq/plugin_api.hpp"
#include "plugin_arms.hpp"

namespace {

kq::IKernelArm* load_arm(const char* name) {
  kq::IKernelArm* a = kq::test::plugin_arm("kq_cudnn_graph", name);
  REQUIRE_MESSAGE(a != nullptr, "no arm named " << name << " in kq_cudnn_graph");
  return a;
}

using kq::test::leaf_constant;
using kq::test::leaf_input;
using kq::test::node;

kq::OpSpec make_spec(const std::string& op, std::vector<std::string> inputs,
                     std::vector<kq::ExprNode> nodes, kq::Domain domain) {
  kq::OpSpec s;
  s.op = op;
  s.dtype = kq::DType::f32;
  s.inputs = std::move(inputs);
  s.outputs = {kq::OutputSpec{"out", {}}};
  s.semantics.nodes = std::move(nodes);
  s.semantics.text = op;
  s.domain = domain;
  s.layouts.contiguous_only = true;
  s.layouts.min_alignment_bytes = 4;
  s.layouts.ranks = {1, 2, 3, 4};
  return s;
}

kq::OpSpec residual_relu(kq::Domain d = kq::Domain::finite) {
  return make_spec("residual_relu", {"x", "residual"},
                   {leaf_input(0), leaf_input(1), node(kq::Op::add, 0, 1), node(kq::Op::relu, 2)},
                   d);
}

// kq's definitions in double (core/expr/reference.hpp), for the expressions used here.
double ref_op(kq::Op op, double a, double b, double c) {
  switch (op) {
    case kq::Op::relu:
      return (a > 0 || std::isnan(a)) ? a : 0.0;
    case kq::Op::add:
      return a + b;
    case kq::Op::sub:
      return a - b;
    case kq::Op::mul:
      return a * b;
    case kq::Op::gelu:
      return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
    case kq::Op::silu:
      return a / (1.0 + std::exp(-a));
    case kq::Op::sigmoid:
      return 1.0 / (1.0 + std::exp(-a));
    case kq::Op::tanh:
      return std::tanh(a);
    case kq::Op::exp:
      return std::exp(a);
    case kq::Op::gt:
      return a > b ? 1.0 : 0.0;
    case kq::Op::select:
      return a != 0 ? b : c;
    case kq::Op::max:
      return std::isnan(a) || std::isnan(b)
                 ? NAN
                 : (a == 0 && b == 0 ? (std::signbit(a) ? b : a) : std::max(a, b));
    case kq::Op::min:
      return std::isnan(a) || std::isnan(b)
                 ? NAN
                 : (a == 0 && b == 0 ? (std::signbit(a) ? a : b) : std::min(a, b));
    case kq::Op::clamp:
      return ref_op(kq::Op::min, ref_op(kq::Op::max, a, b, 0), c, 0);
    default:
      return NAN;
  }
}

float reference(const kq::Expr& e, const std::vector<std::vector<float> >& in, std::size_t i) {
  std::vector<double> v(e.nodes.size());
  for (std::size_t k = 0; k < e.nodes.size(); ++k) {
    const kq::ExprNode& n = e.nodes[k];
    if (n.op == kq::Op::input) {
      v[k] = in[static_cast<std::size_t>(n.input)][i];
    } else if (n.op == kq::Op::constant) {
      v[k] = n.value;
    } else {
      auto at = [&](int j) { return j >= 0 ? v[static_cast<std::size_t>(j)] : 0.0; };
      v[k] = ref_op(n.op, at(n.args[0]), at(n.args[1]), at(n.args[2]));
    }
  }
  return static_cast<float>(v.back());
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

struct DevBuf {
  explicit DevBuf(std::size_t bytes) { REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  void* p = nullptr;
};

struct Outcome {
  kq::Status prepare = kq::Status::ok();
  kq::Status run = kq::Status::ok();
  std::vector<float> out;
  double prepare_ms = 0;
};

// Copies the inputs to fresh device buffers at `offset` elements past a 256-byte aligned start,
// prepares, runs once on a new stream and copies the output back.
Outcome run_arm(kq::IKernelArm& arm, const kq::OpSpec& spec,
                const std::vector<std::vector<float> >& inputs, std::size_t offset = 0) {
  Outcome o;
  std::size_t n = inputs[0].size();
  std::size_t bytes = (n + offset + 4) * sizeof(float);
  std::vector<std::unique_ptr<DevBuf> > bufs;
  std::vector<kq::TensorView> ins, outs;
  for (const auto& h : inputs) {
    bufs.push_back(std::make_unique<DevBuf>(bytes));
    float* d = static_cast<float*>(bufs.back()->p) + offset;
    REQUIRE(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    ins.push_back(kq::TensorView::contiguous_1d(d, static_cast<std::int64_t>(n), kq::DType::f32,
                                                kq::Device::cuda));
  }
  bufs.push_back(std::make_unique<DevBuf>(bytes));
  float* out = static_cast<float*>(bufs.back()->p) + offset;
  REQUIRE(cudaMemset(bufs.back()->p, 0xFF, bytes) == cudaSuccess);  // NaN poison
  outs.push_back(kq::TensorView::contiguous_1d(out, static_cast<std::int64_t>(n), kq::DType::f32,
                                               kq::Device::cuda));
  kq::Problem p{&spec, ins, outs};
  auto t0 = std::chrono::steady_clock::now();
  o.prepare = arm.prepare(p);
  o.prepare_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!o.prepare.is_ok()) return o;
  REQUIRE(cudaMemset(bufs.back()->p, 0xFF, bytes) == cudaSuccess);  // the search wrote it
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  o.run = arm.run(ins, outs, stream);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaStreamDestroy(stream);
  o.out.resize(n);
  REQUIRE(cudaMemcpy(o.out.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  return o;
}

// The "chosen:" line of the most recent search, from the notes artifact.
std::string chosen_line(const kq::IKernelArm& arm) {
  for (const kq::Artifact& a : arm.artifacts()) {
    if (a.filename != "search.md") continue;
    auto at = a.content.rfind("chosen:");
    if (at == std::string::npos) return "(no plan chosen)";
    return a.content.substr(at, a.content.find('\n', at) - at);
  }
  return "(no search notes)";
}

// With KQ_CUDNN_NOTES set, the arm's search notes are written there (the table of every shaping
// and configuration tried).
void dump_notes(const kq::IKernelArm& arm) {
  const char* path = std::getenv("KQ_CUDNN_NOTES");
  if (path == nullptr) return;
  std::FILE* f = std::fopen(path, "a");
  if (f == nullptr) return;
  for (const kq::Artifact& a : arm.artifacts())
    if (a.kind == "notes" || a.kind == "plan" || a.kind == "flags")
      std::fprintf(f, "==== %s %s\n%s\n", arm.identity().name.c_str(), a.filename.c_str(),
                   a.content.c_str());
  std::fclose(f);
}

// Random inputs in [-4, 4] with signed zeros, exact cancellations and overflowing sums planted.
std::vector<std::vector<float> > residual_inputs(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> x(n), r(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = u(rng);
    r[i] = u(rng);
    if (i % 97 == 5) x[i] = r[i] = -0.0f;       // -0 + -0 = -0, relu gives +0
    if (i % 89 == 7) r[i] = -x[i];              // exact cancellation: +0
    if (i % 1009 == 11) x[i] = r[i] = 3.0e38f;  // overflows to +inf
  }
  return {x, r};
}

void check_bitwise(const kq::OpSpec& spec, const std::vector<std::vector<float> >& in,
                   const std::vector<float>& got) {
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], reference(spec.semantics, in, i)) && bad++ == 0) first = i;
  if (bad > 0) {
    float want = reference(spec.semantics, in, first);
    MESSAGE(bad << " of " << got.size() << " differ; first at " << first << ": x=" << in[0][first]
                << " residual=" << in[1][first] << " got " << got[first] << " (0x" << std::hex
                << std::bit_cast<std::uint32_t>(got[first]) << ") expected " << want << " (0x"
                << std::bit_cast<std::uint32_t>(want) << ")" << std::dec);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("cudnn_pointwise: residual_relu bit for bit at several sizes") {
  kq::IKernelArm* arm = load_arm("cudnn_pointwise");
  kq::OpSpec spec = residual_relu();
  REQUIRE(arm->supports(spec).is_ok());
  for (std::size_t n : {std::size_t{4097}, std::size_t{1} << 20, (std::size_t{1} << 20) + 3,
                        std::size_t{1} << 24}) {
    CAPTURE(n);
    auto in = residual_inputs(n, static_cast<unsigned>(n));
    Outcome o = run_arm(*arm, spec, in);
    INFO("prepare: " << o.prepare.message() << " run: " << o.run.message());
    REQUIRE(o.prepare.is_ok());
    REQUIRE(o.run.is_ok());
    MESSAGE("n=" << n << " prepare " << o.prepare_ms << " ms; " << chosen_line(*arm));
    check_bitwise(spec, in, o.out);
  }
}

// What the exact relu lowering costs against RELU_FWD, by the searches' own timings (reported).
TEST_CASE("cudnn_pointwise: relu lowerings at 2^24") {
  kq::OpSpec spec = residual_relu();
  auto in = residual_inputs(std::size_t{1} << 24, 24);
  for (const char* name : {"cudnn_pointwise", "cudnn_pointwise_relu_fwd"}) {
    kq::IKernelArm* arm = load_arm(name);
    Outcome o = run_arm(*arm, spec, in);
    REQUIRE(o.prepare.is_ok());
    REQUIRE(o.run.is_ok());
    MESSAGE(std::string(name) << ": " << chosen_line(*arm));
  }
}

TEST_CASE("cudnn_pointwise: small sizes, 4-byte offsets, cached plans, new pointers") {
  kq::IKernelArm* arm = load_arm("cudnn_pointwise");
  kq::OpSpec spec = residual_relu();
  for (std::size_t n : {1, 3, 5, 1023, 4097}) {
    for (std::size_t offset : {0, 1}) {
      CAPTURE(n);
      CAPTURE(offset);
      auto in = residual_inputs(n, static_cast<unsigned>(n + offset));
      Outcome o = run_arm(*arm, spec, in, offset);
      if (o.prepare.is_unsupported()) {
        // cuDNN may want 16-byte aligned pointers; refusing is within the contract.
        MESSAGE("n=" << n << " offset " << offset << ": unsupported: " << o.prepare.message());
        continue;
      }
      INFO("prepare: " << o.prepare.message() << " run: " << o.run.message());
      REQUIRE(o.prepare.is_ok());
      REQUIRE(o.run.is_ok());
      // The second prepare of the same size and alignment hits the cache: no search.
      Outcome again = run_arm(*arm, spec, in, offset);
      REQUIRE(again.prepare.is_ok());
      REQUIRE(again.run.is_ok());
      MESSAGE("n=" << n << " offset " << offset << ": prepare " << o.prepare_ms << " ms, again "
                   << again.prepare_ms << " ms");
      CHECK(again.prepare_ms < 1000.0);
      check_bitwise(spec, in, o.out);
      check_bitwise(spec, in, again.out);
    }
  }
}

TEST_CASE("cudnn_pointwise: special values of relu(x + residual), ieee domain") {
  // cudnn_pointwise must match kq's definitions bit for bit; the relu_fwd variant (cuDNN's own
  // RELU_FWD, a declared known-broken candidate) is only reported.
  for (const char* name : {"cudnn_pointwise", "cudnn_pointwise_relu_fwd"}) {
    const std::string arm_name = name;
    CAPTURE(arm_name);
    const bool must_match = std::string(name) == "cudnn_pointwise";
    kq::IKernelArm* arm = load_arm(name);
    kq::OpSpec spec = residual_relu(kq::Domain::ieee);
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float den = std::numeric_limits<float>::denorm_min();
    std::vector<float> x = {-0.0f, 0.0f,  -0.0f, nan,  -nan,  inf,    -inf, inf,
                            1.0f,  -1.0f, den,   -den, 3e38f, -3e38f, 2.0f, -2.5f};
    std::vector<float> r = {-0.0f, -0.0f, 0.0f, 1.0f,  -1.0f, 1.0f,   1.0f, -inf,
                            -1.0f, 1.0f,  0.0f, -0.0f, 3e38f, -3e38f, nan,  0.5f};
    // Repeat to a size the shapings divide, keeping the pattern.
    std::vector<std::vector<float> > in(2);
    for (std::size_t i = 0; i < 1024; ++i) {
      in[0].push_back(x[i % x.size()]);
      in[1].push_back(r[i % r.size()]);
    }
    Outcome o = run_arm(*arm, spec, in);
    INFO("prepare: " << o.prepare.message() << " run: " << o.run.message());
    REQUIRE(o.prepare.is_ok());
    REQUIRE(o.run.is_ok());
    for (std::size_t i = 0; i < x.size(); ++i) {
      float want = reference(spec.semantics, in, i);
      if (!same_bits(o.out[i], want))
        MESSAGE(std::string(name) << ": relu(" << x[i] << " + " << r[i] << "): got " << o.out[i]
                                  << " (0x" << std::hex << std::bit_cast<std::uint32_t>(o.out[i])
                                  << "), kq defines " << want << " (0x"
                                  << std::bit_cast<std::uint32_t>(want) << ")" << std::dec);
    }
    if (must_match) check_bitwise(spec, in, o.out);
  }
}

TEST_CASE("cudnn_pointwise: other expressions within a loose ulp bound") {
  kq::IKernelArm* arm = load_arm("cudnn_pointwise");
  using kq::Op;
  // Bitwise where the expression rounds once (cuDNN then has no freedom); otherwise the error in
  // ulps of max(|expected|, largest input) is reported and bounded: 4 where a few roundings
  // compound, 512 where cuDNN's transcendental approximations are involved (tanh(x) * exp(y) was
  // 168 ulp on the H200), which only catches garbage.
  struct Case {
    const char* name;
    std::vector<std::string> inputs;
    std::vector<kq::ExprNode> nodes;
    double max_ulp;  // 0: bitwise
  };
  const double kTranscendental = 512;
  std::vector<Case> cases = {
      {"gelu(x)", {"x"}, {leaf_input(0), node(Op::gelu, 0)}, kTranscendental},
      {"silu(x) * y",
       {"x", "y"},
       {leaf_input(0), node(Op::silu, 0), leaf_input(1), node(Op::mul, 1, 2)},
       kTranscendental},
      {"2.5 * x + -0.5 * y",
       {"x", "y"},
       {leaf_constant(2.5), leaf_input(0), node(Op::mul, 0, 1), leaf_constant(-0.5), leaf_input(1),
        node(Op::mul, 3, 4), node(Op::add, 2, 5)},
       4},
      {"clamp(x, -1, 1)",
       {"x"},
       {leaf_input(0), leaf_constant(-1.0), leaf_constant(1.0), node(Op::clamp, 0, 1, 2)},
       0},
      {"0.5 - x", {"x"}, {leaf_constant(0.5), leaf_input(0), node(Op::sub, 0, 1)}, 0},
      {"max(x, y) - min(x, 0.5)",
       {"x", "y"},
       {leaf_input(0), leaf_input(1), node(Op::max, 0, 1), leaf_constant(0.5), node(Op::min, 0, 3),
        node(Op::sub, 2, 4)},
       0},
      {"1 - sigmoid(x)",
       {"x"},
       {leaf_constant(1.0), leaf_input(0), node(Op::sigmoid, 1), node(Op::sub, 0, 2)},
       kTranscendental},
      {"tanh(x) * exp(y)",
       {"x", "y"},
       {leaf_input(0), node(Op::tanh, 0), leaf_input(1), node(Op::exp, 2), node(Op::mul, 1, 3)},
       kTranscendental},
  };
  const std::size_t n = std::size_t{1} << 16;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    kq::OpSpec spec = make_spec(c.name, c.inputs, c.nodes, kq::Domain::finite);
    REQUIRE(arm->supports(spec).is_ok());
    std::vector<std::vector<float> > in(c.inputs.size(), std::vector<float>(n));
    for (auto& v : in)
      for (float& f : v) f = u(rng);
    Outcome o = run_arm(*arm, spec, in);
    INFO("prepare: " << o.prepare.message() << " run: " << o.run.message());
    if (o.prepare.is_unsupported()) {
      MESSAGE(std::string(c.name) << ": unsupported: " << o.prepare.message());
      continue;
    }
    REQUIRE(o.prepare.is_ok());
    REQUIRE(o.run.is_ok());
    double worst = 0;
    std::size_t at = 0, differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float want = reference(spec.semantics, in, i);
      differ += same_bits(o.out[i], want) ? 0 : 1;
      float scale = std::fabs(want);
      for (const auto& v : in) scale = std::max(scale, std::fabs(v[i]));
      double ulp = static_cast<double>(std::nextafter(scale, INFINITY) - scale);
      double err = std::fabs(static_cast<double>(o.out[i]) - static_cast<double>(want)) / ulp;
      if (std::isnan(err)) err = same_bits(o.out[i], want) ? 0 : 1e30;
      if (err > worst) worst = err, at = i;
    }
    MESSAGE(std::string(c.name) << ": " << differ << " of " << n << " not bitwise, max " << worst
                                << " ulp of scale (at " << at << "); " << chosen_line(*arm));
    if (c.max_ulp == 0)
      CHECK(differ == 0);
    else
      CHECK(worst <= c.max_ulp);
  }
}

TEST_CASE("cudnn_pointwise: refusals") {
  kq::IKernelArm* arm = load_arm("cudnn_pointwise");
  kq::OpSpec f64 = residual_relu();
  f64.dtype = kq::DType::f64;
  CHECK(arm->supports(f64).is_unsupported());

  kq::OpSpec unknown = residual_relu();
  unknown.semantics.nodes[3].op = static_cast<kq::Op>(200);  // no such operation
  kq::Status s = arm->supports(unknown);
  CHECK(s.is_unsupported());
  MESSAGE("unknown op: " << s.message());

  kq::OpSpec two = residual_relu();
  two.outputs.push_back(kq::OutputSpec{"out2", {}});
  CHECK(arm->supports(two).is_unsupported());

  // BOOLEAN masks: cuDNN's runtime compiler fails on them at most odd and small sizes.
  using kq::Op;
  kq::OpSpec leaky =
      make_spec("select(x > 0, x, 0.01 * x)", {"x"},
                {leaf_input(0), leaf_constant(0.0), node(Op::gt, 0, 1), leaf_constant(0.01),
                 node(Op::mul, 3, 0), node(Op::select, 2, 0, 4)},
                kq::Domain::finite);
  s = arm->supports(leaky);
  CHECK(s.is_unsupported());
  MESSAGE("select: " << s.message());
  kq::OpSpec mask = make_spec(
      "(x > y) * y", {"x", "y"},
      {leaf_input(0), leaf_input(1), node(Op::gt, 0, 1), node(Op::mul, 2, 1)}, kq::Domain::finite);
  CHECK(arm->supports(mask).is_unsupported());

  // In the ieee domain MAX and MIN would drop NaN where kq's clamp propagates it.
  kq::OpSpec clamp_ieee =
      make_spec("clamp(x, -1, 1)", {"x"},
                {leaf_input(0), leaf_constant(-1.0), leaf_constant(1.0), node(Op::clamp, 0, 1, 2)},
                kq::Domain::ieee);
  CHECK(arm->supports(clamp_ieee).is_unsupported());
  clamp_ieee.domain = kq::Domain::finite;
  CHECK(arm->supports(clamp_ieee).is_ok());

  // A run the arm was not prepared for is refused, not computed.
  kq::OpSpec spec = residual_relu();
  DevBuf a(4 * 77), b(4 * 77), c(4 * 77);
  auto view = [](void* p) {
    return kq::TensorView::contiguous_1d(p, 77, kq::DType::f32, kq::Device::cuda);
  };
  std::vector<kq::TensorView> ins = {view(a.p), view(b.p)}, outs = {view(c.p)};
  auto in_span = std::span<const kq::TensorView>(ins);
  auto out_span = std::span<const kq::TensorView>(outs);
  kq::Problem p{&spec, ins, outs};
  REQUIRE(arm->prepare(p).is_ok());
  kq::TensorView shorter = view(c.p);
  shorter.shape[0] = 76;
  std::vector<kq::TensorView> ins2 = {shorter, shorter}, outs2 = {shorter};
  CHECK(arm->run(ins2, outs2, nullptr).is_unsupported());
  CHECK(arm->run(in_span, out_span, nullptr).is_ok());
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  // The relu_fwd variant is offered only where it differs: expressions with a relu.
  kq::OpSpec gelu =
      make_spec("gelu", {"x"}, {leaf_input(0), node(kq::Op::gelu, 0)}, kq::Domain::finite);
  CHECK(load_arm("cudnn_pointwise_relu_fwd")->supports(gelu).is_unsupported());
  CHECK(load_arm("cudnn_pointwise_relu_fwd")->identity().expected_rejection == "values");

  dump_notes(*arm);
  dump_notes(*load_arm("cudnn_pointwise_relu_fwd"));
}
#endif  // KQ_HAVE_CUDA
