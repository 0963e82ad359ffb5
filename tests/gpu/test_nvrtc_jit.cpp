// GPU tests of the nvrtc_jit plugin (arms nvrtc_jit and nvrtc_jit_scalar): residual_relu in f32
// and f64 over awkward sizes and pointer offsets, bit for bit against the float64 reference
// (plugin-api/include/kq/expr_eval.hpp) rounded once, NaN/inf/-0/subnormals included, guard zones
// checked; every non-transcendental op in one expression, bit for bit, in f32 and f64; each
// transcendental within a few ulps; strided, broadcast, reversed and in-place views; refusals;
// artifacts; and, with KQ_TEST_HUGE=1, 2^31 + 5 elements (64-bit indexing). Without a usable
// CUDA device the test's main skips, saying why.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("nvrtc_jit arms") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "expr_nodes.hpp"
#include "kq/expr_eval.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"
#include "plugin_arms.hpp"

namespace {

using kq::DType;
using kq::Op;
using kq::OpSpec;
using kq::TensorView;

#define CUDA_OK(call)                                                                       \
  do {                                                                                      \
    const cudaError_t e_ = (call);                                                          \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #call << ": " << std::string(cudaGetErrorName(e_))); \
  } while (0)

kq::IKernelArm* arm(const std::string& name) { return kq::test::plugin_arm("kq_nvrtc_jit", name); }

const char* const kArms[] = {"nvrtc_jit", "nvrtc_jit_scalar"};

using Builder = kq::test::ExprBuilder;

OpSpec spec_of(kq::Expr e, std::vector<std::string> inputs, DType t, std::string text,
               bool contiguous_only = true, std::vector<std::string> may_alias = {}) {
  OpSpec s;
  s.op = "test";
  s.dtype = t;
  s.inputs = std::move(inputs);
  s.outputs = {{"out", std::move(may_alias)}};
  s.semantics = std::move(e);
  s.semantics.text = std::move(text);
  s.domain = kq::Domain::ieee;
  s.layouts.contiguous_only = contiguous_only;
  s.layouts.min_alignment_bytes = static_cast<std::int64_t>(kq::dtype_size(t));
  s.layouts.ranks = {1, 2, 3, 4, 5, 6, 7, 8};
  return s;
}

OpSpec residual_relu(DType t, bool contiguous_only = true) {
  Builder b;
  int x = b.in(0);
  int r = b.in(1);
  b.op(Op::relu, b.op(Op::add, x, r));
  return spec_of(b.e, {"x", "residual"}, t, "relu(x + residual)", contiguous_only);
}

// How results are compared: bitwise (NaN as a mask), or within ulps * eps * |want| + abs.
struct Tolerance {
  double ulps = 0;
  double abs = 0;
};

template <typename T>
bool matches(T want, T got, Tolerance tol) {
  const double w = static_cast<double>(want), g = static_cast<double>(got);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  if (std::memcmp(&want, &got, sizeof(T)) == 0) return true;
  if (tol.ulps == 0 && tol.abs == 0) return false;
  if (std::isinf(w) || std::isinf(g)) return false;
  const double eps = static_cast<double>(std::numeric_limits<T>::epsilon());
  return std::fabs(g - w) <= tol.ulps * eps * std::fabs(w) + tol.abs;
}

// Device memory with guard zones: `pad` elements on each side filled with a sentinel byte.
struct Buffer {
  static constexpr std::int64_t kPad = 64;
  char* base = nullptr;
  std::int64_t elems = 0;  // usable elements (the span views may reach)
  std::size_t es = 4;
  Buffer(std::int64_t n, std::size_t elem_size) : elems(n), es(elem_size) {
    CUDA_OK(cudaMalloc(&base, bytes()));
    CUDA_OK(cudaMemset(base, 0xA5, bytes()));
  }
  ~Buffer() { cudaFree(base); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::size_t bytes() const { return static_cast<std::size_t>(elems + 2 * kPad) * es; }
  char* at(std::int64_t elem) const { return base + static_cast<std::size_t>(kPad + elem) * es; }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> h(bytes());
    cudaMemcpy(h.data(), base, h.size(), cudaMemcpyDeviceToHost);
    return h;
  }
};

TensorView view(void* data, DType t, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> strides = {}) {
  TensorView v;
  v.data = data;
  v.dtype = t;
  v.device = kq::Device::cuda;
  v.rank = static_cast<int>(shape.size());
  std::int64_t s = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides.empty() ? s : strides[d];
    s *= shape[d];
  }
  return v;
}

// Where the element at multi-index `idx` of `v` lives, in elements from v.data.
std::int64_t offset_of(const TensorView& v, std::int64_t linear) {
  std::int64_t off = 0;
  for (int d = v.rank - 1; d >= 0; --d) {
    off += (linear % v.shape[d]) * v.strides[d];
    linear /= v.shape[d];
  }
  return off;
}

// The lowest and highest element offsets a view reaches.
void reach(const TensorView& v, std::int64_t& lo, std::int64_t& hi) {
  lo = hi = 0;
  for (int d = 0; d < v.rank; ++d) {
    std::int64_t r = (v.shape[d] - 1) * v.strides[d];
    (r < 0 ? lo : hi) += r;
  }
}

struct Layout {
  std::vector<std::int64_t> shape;
  std::vector<std::vector<std::int64_t> > strides;  // per input, then output; empty: row-major
  std::vector<std::int64_t> offsets;                // elements past the aligned base, per tensor
  int alias = -1;                                   // output on input `alias`'s storage
};

using Gen = std::function<double(int input, std::int64_t element)>;

// Runs `arm_name` on `spec` over `lay` with values from `gen`; checks every output element
// against the reference, the guard zones, and that inputs are unchanged (unless in place).
template <typename T>
void check_case(const char* arm_name, const OpSpec& spec, const Layout& lay, const Gen& gen,
                Tolerance tol = {}) {
  kq::IKernelArm* a = arm(arm_name);
  REQUIRE(a != nullptr);
  const DType t = spec.dtype;
  const int ni = static_cast<int>(spec.inputs.size());
  const int nt = ni + 1;
  std::vector<std::unique_ptr<Buffer> > bufs;
  std::vector<TensorView> views;
  std::vector<std::vector<unsigned char> > before;
  for (int k = 0; k < nt; ++k) {
    const bool is_out = k == ni;
    const std::int64_t off = lay.offsets.empty() ? 0 : lay.offsets[k];
    std::vector<std::int64_t> st =
        lay.strides.empty() ? std::vector<std::int64_t>{} : lay.strides[k];
    TensorView v = view(nullptr, t, lay.shape, st);
    std::int64_t lo, hi;
    reach(v, lo, hi);
    if (is_out && lay.alias >= 0) {
      v = views[lay.alias];
    } else {
      bufs.push_back(std::make_unique<Buffer>(hi - lo + 1 + off, sizeof(T)));
      v.data = bufs.back()->at(off - lo);
      if (!is_out) {  // fill the reachable elements (broadcast ones get the last write)
        std::vector<unsigned char> img = bufs.back()->download();
        const std::int64_t n = v.numel();
        for (std::int64_t j = 0; j < n; ++j) {
          T val = static_cast<T>(gen(k, j));
          std::memcpy(img.data() + (static_cast<char*>(v.data) - bufs.back()->base) +
                          offset_of(v, j) * static_cast<std::int64_t>(sizeof(T)),
                      &val, sizeof(T));
        }
        CUDA_OK(cudaMemcpy(bufs.back()->base, img.data(), img.size(), cudaMemcpyHostToDevice));
        before.push_back(img);
      }
    }
    views.push_back(v);
  }
  // Host copies of the inputs as the kernel will see them.
  const std::int64_t n = views[ni].numel();
  std::vector<std::vector<double> > in(static_cast<std::size_t>(ni), std::vector<double>(n));
  for (int k = 0; k < ni; ++k) {
    const Buffer& b = *bufs[k];
    const auto& img = before[k];
    for (std::int64_t j = 0; j < n; ++j) {
      T val;
      std::memcpy(&val,
                  img.data() + (static_cast<char*>(views[k].data) - b.base) +
                      offset_of(views[k], j) * static_cast<std::int64_t>(sizeof(T)),
                  sizeof(T));
      in[k][j] = static_cast<double>(val);
    }
  }

  std::vector<TensorView> ins(views.begin(), views.begin() + ni);
  std::vector<TensorView> outs{views[ni]};
  kq::Problem p{&spec, ins, outs};
  kq::Status s = a->prepare(p);
  REQUIRE_MESSAGE(s.is_ok(), arm_name << " prepare: " << s.message());
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  s = a->run(ins, outs, stream);
  REQUIRE_MESSAGE(s.is_ok(), arm_name << " run: " << s.message());
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaStreamDestroy(stream));

  const Buffer& ob = lay.alias >= 0 ? *bufs[lay.alias] : *bufs[ni];
  const auto img = ob.download();
  const auto at = [&](std::int64_t byte) {
    T v;
    std::memcpy(&v, img.data() + byte, sizeof(T));
    return v;
  };
  const std::int64_t obase = static_cast<char*>(views[ni].data) - ob.base;
  std::int64_t bad = 0;
  std::vector<double> ev(static_cast<std::size_t>(ni));
  for (std::int64_t j = 0; j < n && bad < 5; ++j) {
    for (int k = 0; k < ni; ++k) ev[k] = in[k][j];
    // The reference: every node a double, rounded once to T at the end.
    const T want = static_cast<T>(kq::ref::eval_expr(spec.semantics, ev));
    const T got = at(obase + offset_of(views[ni], j) * static_cast<std::int64_t>(sizeof(T)));
    if (!matches(want, got, tol)) {
      ++bad;
      std::string args;
      for (int k = 0; k < ni; ++k) args += (k ? ", " : "") + std::to_string(ev[k]);
      FAIL_CHECK(arm_name << " " << spec.semantics.text << " n=" << n << " element " << j << " ("
                          << args << "): want " << static_cast<double>(want) << " got "
                          << static_cast<double>(got));
    }
  }
  // Guard zones (and, out of place, inputs) untouched.
  const auto& pre_out = lay.alias >= 0 ? before[lay.alias] : std::vector<unsigned char>{};
  for (std::size_t byte = 0; byte < static_cast<std::size_t>(Buffer::kPad) * sizeof(T); ++byte) {
    if (lay.alias < 0) {
      CHECK(img[byte] == 0xA5);
      CHECK(img[img.size() - 1 - byte] == 0xA5);
    } else {
      CHECK(img[byte] == pre_out[byte]);
      CHECK(img[img.size() - 1 - byte] == pre_out[img.size() - 1 - byte]);
    }
  }
  for (int k = 0; k < ni; ++k)
    if (k != lay.alias) CHECK(bufs[k]->download() == before[k]);
}

// Values that exercise the edges: NaN, +-inf, +-0, subnormals, and ordinary numbers.
template <typename T>
double edgy(int input, std::int64_t j) {
  using L = std::numeric_limits<T>;
  const std::uint64_t h = (static_cast<std::uint64_t>(j) * 0x9E3779B97F4A7C15ull) ^
                          (static_cast<std::uint64_t>(input + 1) * 0xBF58476D1CE4E5B9ull);
  const double u = static_cast<double>((h >> 11) & 0xFFFFF) / 1048576.0;  // [0, 1)
  switch ((h >> 40) % 16) {
    case 0:
      return static_cast<double>(L::quiet_NaN());
    case 1:
      return static_cast<double>(L::infinity());
    case 2:
      return -static_cast<double>(L::infinity());
    case 3:
      return 0.0;
    case 4:
      return -0.0;
    case 5:
      return static_cast<double>(L::denorm_min()) * (1 + (h >> 50) % 7) * (u < 0.5 ? -1 : 1);
    case 6:
      return static_cast<double>(L::max()) * (0.5 + u / 2) * (u < 0.3 ? -1 : 1);
    default:
      return (u * 2 - 1) * 8;
  }
}

template <typename T>
double finite(int input, std::int64_t j) {
  const std::uint64_t h = (static_cast<std::uint64_t>(j) * 0x9E3779B97F4A7C15ull) ^
                          (static_cast<std::uint64_t>(input + 1) * 0xBF58476D1CE4E5B9ull);
  const double u = static_cast<double>((h >> 11) & 0xFFFFFF) / 16777216.0;
  if ((h >> 50) % 6 == 0 && input > 0) return finite<T>(0, j);  // equal inputs: eq/ne/select
  return (u * 2 - 1) * 6;
}

}  // namespace

TEST_CASE("nvrtc_jit: residual_relu f32 bit for bit over sizes and offsets") {
  REQUIRE(arm("nvrtc_jit") != nullptr);
  const OpSpec s = residual_relu(DType::f32);
  for (const char* name : kArms)
    for (std::int64_t n : {1, 3, 4, 5, 1023, 4097, 1 << 20}) {
      for (std::int64_t off = 0; off < 4; ++off)  // every pointer equally offset: head + vectors
        check_case<float>(name, s, {{n}, {}, {off, off, off}}, edgy<float>);
      check_case<float>(name, s, {{n}, {}, {1, 0, 2}}, edgy<float>);  // mixed: scalar kernel
    }
  check_case<float>("nvrtc_jit", s, {{3, 5, 67}, {}, {}}, edgy<float>);
}

TEST_CASE("nvrtc_jit: residual_relu f64 bit for bit") {
  const OpSpec s = residual_relu(DType::f64);
  for (const char* name : kArms)
    for (std::int64_t n : {1, 3, 4, 5, 1023, 4097, 1 << 20}) {
      check_case<double>(name, s, {{n}, {}, {0, 0, 0}}, edgy<double>);
      check_case<double>(name, s, {{n}, {}, {1, 1, 1}}, edgy<double>);
      check_case<double>(name, s, {{n}, {}, {1, 0, 0}}, edgy<double>);
    }
}

TEST_CASE("nvrtc_jit: residual_relu f16 and bf16 bit for bit over sizes and offsets") {
  // Elements widened to float, the sum rounded once to the half type: the reference exactly.
  for (DType t : {DType::f16, DType::bf16}) {
    const OpSpec s = residual_relu(t);
    for (const char* name : kArms)
      for (std::int64_t n : {1, 3, 7, 8, 9, 33, 4097, (1 << 20) + 3})
        for (const std::vector<std::int64_t>& off :
             std::vector<std::vector<std::int64_t> >{{0, 0, 0}, {1, 1, 1}, {7, 7, 7}, {1, 0, 3}}) {
          if (t == DType::f16)
            check_case<kq::Half>(name, s, {{n}, {}, off}, edgy<kq::Half>);
          else
            check_case<kq::BFloat16>(name, s, {{n}, {}, off}, edgy<kq::BFloat16>);
        }
  }
}

TEST_CASE("nvrtc_jit: silu_mul in bf16 and gelu in f16 within their specs' rules") {
  Builder s;  // silu(x) * y, computed in float, rounded once: {ulp: 1}
  int sx = s.op(Op::silu, s.in(0));
  s.op(Op::mul, sx, s.in(1));
  const OpSpec silu = spec_of(s.e, {"x", "y"}, DType::bf16, "silu(x) * y");
  Builder g;  // gelu(x): {atol: 1e-6, rtol: 1e-3}
  g.op(Op::gelu, g.in(0));
  const OpSpec gelu = spec_of(g.e, {"x"}, DType::f16, "gelu(x)");
  for (const char* name : kArms) {
    check_case<kq::BFloat16>(name, silu, {{4097}, {}, {1, 1, 1}}, finite<kq::BFloat16>, {1, 1e-38});
    check_case<kq::Half>(name, gelu, {{4097}, {}, {3, 3}}, finite<kq::Half>, {1.03, 1e-6});
  }
}

TEST_CASE("nvrtc_jit: every non-transcendental op, bit for bit in f32 and f64") {
  // select(x < y, clamp(max(x, y) * 2.5 - min(x, y) / 3, -1.5, relu(z) + 0.5),
  //        abs(-x) + sqrt(abs(y))) + (x <= z) + (x > z) - (y >= z) + (x == y) * 7 + (x != z) * 0.01
  Builder b;
  int x = b.in(0), y = b.in(1), z = b.in(2);
  int lt = b.op(Op::lt, x, y);
  int mx = b.op(Op::max, x, y);
  int c25 = b.c(2.5);
  int m1 = b.op(Op::mul, mx, c25);
  int mn = b.op(Op::min, x, y);
  int c3 = b.c(3);
  int d1 = b.op(Op::div, mn, c3);
  int s1 = b.op(Op::sub, m1, d1);
  int c15 = b.c(1.5);
  int lo = b.op(Op::neg, c15);
  int rz = b.op(Op::relu, z);
  int c05 = b.c(0.5);
  int hi = b.op(Op::add, rz, c05);
  int cl = b.op(Op::clamp, s1, lo, hi);
  int nx = b.op(Op::neg, x);
  int ax = b.op(Op::abs, nx);
  int ay = b.op(Op::abs, y);
  int sq = b.op(Op::sqrt, ay);
  int e2 = b.op(Op::add, ax, sq);
  int sel = b.op(Op::select, lt, cl, e2);
  int le = b.op(Op::le, x, z);
  int a1 = b.op(Op::add, sel, le);
  int gt = b.op(Op::gt, x, z);
  int a2 = b.op(Op::add, a1, gt);
  int ge = b.op(Op::ge, y, z);
  int a3 = b.op(Op::sub, a2, ge);
  int eq = b.op(Op::eq, x, y);
  int c7 = b.c(7);
  int m7 = b.op(Op::mul, eq, c7);
  int a4 = b.op(Op::add, a3, m7);
  int ne = b.op(Op::ne, x, z);
  int c001 = b.c(0.01);
  int m001 = b.op(Op::mul, ne, c001);
  b.op(Op::add, a4, m001);
  // And the float-computed paths: relu(x * y) + 0 is not needed; max(x * y, z) rounds in float.
  Builder f;
  int fx = f.in(0), fy = f.in(1), fz = f.in(2);
  int fm = f.op(Op::mul, fx, fy);
  int fmax = f.op(Op::max, fm, fz);
  int fs = f.op(Op::sub, fx, fz);
  int fr = f.op(Op::relu, fs);
  f.op(Op::min, fmax, fr);
  for (DType t : {DType::f32, DType::f64}) {
    const OpSpec s = spec_of(b.e, {"x", "y", "z"}, t, "every exact op");
    const OpSpec s2 = spec_of(f.e, {"x", "y", "z"}, t, "min(max(x * y, z), relu(x - z))");
    for (const char* name : kArms)
      for (std::int64_t n : {5, 4097}) {
        if (t == DType::f32) {
          check_case<float>(name, s, {{n}, {}, {}}, finite<float>);
          check_case<float>(name, s, {{n}, {}, {}}, edgy<float>);
          check_case<float>(name, s2, {{n}, {}, {}}, edgy<float>);
        } else {
          check_case<double>(name, s, {{n}, {}, {}}, finite<double>);
          check_case<double>(name, s, {{n}, {}, {}}, edgy<double>);
          check_case<double>(name, s2, {{n}, {}, {}}, edgy<double>);
        }
      }
  }
}

TEST_CASE("nvrtc_jit: constants and overflow match the reference bit for bit in f32") {
  // 2.5 * x - 0.75 * y on values near FLT_MAX: 2.5 * x overflows float, the result need not.
  Builder b;
  int c1 = b.c(2.5);
  int l = b.op(Op::mul, c1, b.in(0));
  int c2 = b.c(0.75);
  int r = b.op(Op::mul, c2, b.in(1));
  b.op(Op::sub, l, r);
  const OpSpec axpby = spec_of(b.e, {"x", "y"}, DType::f32, "2.5 * x - 0.75 * y");
  Builder k;  // select(x > 0, x, 0.01 * x)
  int x0 = k.in(0);
  int cond = k.op(Op::gt, x0, k.c(0));
  int x1 = k.in(0);
  int c001 = k.c(0.01);
  k.op(Op::select, cond, x1, k.op(Op::mul, c001, k.in(0)));
  const OpSpec leaky = spec_of(k.e, {"x"}, DType::f32, "select(x > 0, x, 0.01 * x)");
  const Gen big = [](int input, std::int64_t j) {
    return (input == 0 ? 0.6 + 0.4 * ((j * 37) % 101) / 101.0
                       : 0.6 + 0.4 * ((j * 53) % 97) / 97.0) *
           std::numeric_limits<float>::max() * ((j % 3 == 0) ? -1 : 1);
  };
  for (const char* name : kArms) {
    check_case<float>(name, axpby, {{4097}, {}, {}}, big);
    check_case<float>(name, axpby, {{4097}, {}, {}}, edgy<float>);
    check_case<float>(name, leaky, {{4097}, {}, {1, 1}}, edgy<float>);
  }
}

TEST_CASE("nvrtc_jit: transcendentals within a few ulps in f32 and f64") {
  struct Case {
    Op op;
    Tolerance f32, f64;
  };
  // f32: the CUDA library's float functions (2 ulp) plus the argument's rounding. gelu's
  // absolute terms: 1 + erf cancels for x < 0, so an erf off by an ulp of 1 moves the result by
  // about |x| * 2^-24 in f32 (the spec's atol 1e-6 is set for this) and |x| * 2^-53 in f64.
  const Case cases[] = {
      {Op::exp, {4, 0}, {4, 0}},          {Op::log, {4, 0}, {4, 0}},     {Op::tanh, {4, 0}, {4, 0}},
      {Op::erf, {4, 0}, {4, 0}},          {Op::sigmoid, {4, 0}, {4, 0}}, {Op::silu, {6, 0}, {6, 0}},
      {Op::gelu, {16, 1e-6}, {8, 4e-15}},
  };
  for (const Case& c : cases) {
    Builder b;
    b.op(c.op, b.in(0));
    for (const char* name : kArms) {
      check_case<float>(name, spec_of(b.e, {"x"}, DType::f32, std::string(kq::to_string(c.op))),
                        {{4097}, {}, {1, 1}}, finite<float>, c.f32);
      check_case<double>(name, spec_of(b.e, {"x"}, DType::f64, std::string(kq::to_string(c.op))),
                         {{4097}, {}, {}}, finite<double>, c.f64);
    }
    // The edges: NaN, inf, -0, huge values, subnormals behave like the reference.
    check_case<float>("nvrtc_jit", spec_of(b.e, {"x"}, DType::f32, "edges"), {{1023}, {}, {}},
                      edgy<float>, {c.f32.ulps, std::max(c.f32.abs, 1e-37)});
  }
  // silu(x) * y: the product rounds in float (both operands are floats).
  Builder s;
  int sx = s.op(Op::silu, s.in(0));
  s.op(Op::mul, sx, s.in(1));
  check_case<float>("nvrtc_jit", spec_of(s.e, {"x", "y"}, DType::f32, "silu(x) * y"),
                    {{4097}, {}, {}}, finite<float>, {8, 0});
}

TEST_CASE("nvrtc_jit: strided, broadcast, reversed and in-place views") {
  const OpSpec s = residual_relu(DType::f32, /*contiguous_only=*/false);
  for (const char* name : kArms) {
    // x broadcast along rows, residual with its rows reversed, out transposed.
    check_case<float>(name, s, {{33, 65}, {{0, 1}, {65, -1}, {1, 33}}, {}}, edgy<float>);
    // Every other element, offset by one.
    check_case<float>(name, s, {{1025}, {{2}, {1}, {2}}, {1, 0, 1}}, edgy<float>);
    // Rank 8 with a permuted (non-mergeable) input layout.
    check_case<float>(name, s,
                      {{2, 1, 3, 1, 2, 2, 1, 5}, {{2, 60, 20, 1, 10, 1, 1, 4}, {}, {}}, {}},
                      edgy<float>);
    // Row-major rank 3 views merge to one dimension and take the contiguous kernels.
    check_case<float>(name, s, {{3, 5, 67}, {}, {3, 3, 3}}, edgy<float>);
  }
  // In place (out is x): contiguous with a head, and strided.
  Builder k;
  int x0 = k.in(0);
  int cond = k.op(Op::gt, x0, k.c(0));
  int x1 = k.in(0);
  int c001 = k.c(0.01);
  k.op(Op::select, cond, x1, k.op(Op::mul, c001, k.in(0)));
  const OpSpec leaky = spec_of(k.e, {"x"}, DType::f32, "select(x > 0, x, 0.01 * x)", false, {"x"});
  for (const char* name : kArms) {
    for (std::int64_t n : {1, 5, 4097, 1 << 20})
      check_case<float>(name, leaky, {{n}, {}, {1, 1}, 0}, edgy<float>);
    check_case<float>(name, leaky, {{33, 65}, {{1, 33}, {1, 33}}, {}, 0}, edgy<float>);
  }
}

TEST_CASE("nvrtc_jit: refusals and edge calls") {
  kq::IKernelArm* a = arm("nvrtc_jit");
  REQUIRE(a != nullptr);
  const OpSpec s = residual_relu(DType::f32);  // contiguous only
  Buffer x(2048, 4), r(2048, 4), o(2048, 4);
  std::vector<TensorView> ins{view(x.at(0), DType::f32, {1024}), view(r.at(0), DType::f32, {1024})};
  std::vector<TensorView> outs{view(o.at(0), DType::f32, {1024})};
  kq::Problem p{&s, ins, outs};

  // run() before any prepare() on a fresh arm instance.
  kq::PluginSet fresh = kq::test::load_plugin("kq_nvrtc_jit");
  REQUIRE(!fresh.arms.empty());
  CHECK(fresh.arms[0].arm->run(ins, outs, nullptr).is_error());

  REQUIRE(a->prepare(p).is_ok());
  // A strided view is outside this spec's contract: refused by prepare() and run().
  std::vector<TensorView> strided{view(x.at(0), DType::f32, {1024}, {2}), ins[1]};
  kq::Problem ps{&s, strided, outs};
  CHECK(a->prepare(ps).is_unsupported());
  CHECK(a->run(strided, outs, nullptr).is_unsupported());
  // An output overlapping itself, where strides are admitted.
  const OpSpec ss = residual_relu(DType::f32, false);
  std::vector<TensorView> ins2{view(x.at(0), DType::f32, {32, 32}),
                               view(r.at(0), DType::f32, {32, 32})};
  std::vector<TensorView> self{view(o.at(0), DType::f32, {32, 32}, {0, 1})};
  kq::Problem po{&ss, ins2, self};
  CHECK(a->prepare(po).is_unsupported());
  // Zero elements: ok, nothing launched.
  std::vector<TensorView> e_in{view(x.at(0), DType::f32, {0}), view(r.at(0), DType::f32, {0})};
  std::vector<TensorView> e_out{view(o.at(0), DType::f32, {0})};
  kq::Problem pe{&s, e_in, e_out};
  CHECK(a->prepare(pe).is_ok());
  CHECK(a->run(e_in, e_out, nullptr).is_ok());
  // Wrong dtype view.
  std::vector<TensorView> f64in{view(x.at(0), DType::f64, {512}), view(r.at(0), DType::f64, {512})};
  CHECK(a->run(f64in, outs, nullptr).is_unsupported());
  // supports(): any well-formed f32/f64 expression; malformed ones refused.
  CHECK(a->supports(s).is_ok());
  CHECK(a->supports(residual_relu(DType::f64)).is_ok());
  OpSpec bad = s;
  bad.semantics.nodes[2].args[1] = 7;
  CHECK(a->supports(bad).is_unsupported());
  CHECK(a->identity().family == "nvrtc_jit");
  CHECK(a->identity().device == kq::Device::cuda);
  CHECK(arm("nvrtc_jit_scalar") != nullptr);
}

TEST_CASE("nvrtc_jit: artifacts and the compile cache") {
  // A spec no other case compiled (its constant is unique to this run), so the first prepare
  // in this process is a compile.
  const double unique = 1.0 + static_cast<double>(std::random_device{}() % 100000) / 1e6;
  Builder b;
  int x = b.in(0);
  b.op(Op::mul, x, b.c(unique));
  const OpSpec s = spec_of(b.e, {"x"}, DType::f32, "x * k");
  Buffer in(4096, 4), out(4096, 4);
  std::vector<TensorView> ins{view(in.at(0), DType::f32, {4096})};
  std::vector<TensorView> outs{view(out.at(0), DType::f32, {4096})};
  kq::Problem p{&s, ins, outs};
  kq::PluginSet fresh = kq::test::load_plugin("kq_nvrtc_jit");
  REQUIRE(fresh.arms.size() == 2);
  REQUIRE(fresh.arms[0].arm->prepare(p).is_ok());
  auto arts = fresh.arms[0].arm->artifacts();
  auto find = [&](const std::string& kind) -> std::string {
    for (auto& a : arts)
      if (a.kind == kind) return a.content;
    return "<none>";
  };
  CHECK(find("source").find("extern \"C\" __global__") != std::string::npos);
  CHECK(find("ptx").find("ld.global.nc.v4.f32") != std::string::npos);
  CHECK(find("cubin").substr(0, 4) ==
        "\x7f"
        "ELF");
  CHECK(find("ptxas").find("Used") != std::string::npos);
  CHECK(find("flags").find("--fmad=false") != std::string::npos);
  CHECK(find("plan").find("result:") != std::string::npos);
  const std::string notes = find("notes");
  MESSAGE(notes);
  CHECK(notes.find("cache miss") != std::string::npos);
  // The second arm compiles the same source: the in-memory cache answers.
  REQUIRE(fresh.arms[1].arm->prepare(p).is_ok());
  std::string notes2;
  for (auto& a : fresh.arms[1].arm->artifacts())
    if (a.kind == "notes") notes2 = a.content;
  CHECK(notes2.find("cache memory") != std::string::npos);
}

TEST_CASE("nvrtc_jit: 2^31 + 5 elements (KQ_TEST_HUGE=1)") {
  const char* huge = std::getenv("KQ_TEST_HUGE");
  if (!huge || std::string(huge) != "1") {
    MESSAGE("skipped: set KQ_TEST_HUGE=1 (needs ~26 GB of device memory)");
    return;
  }
  const std::int64_t n = (std::int64_t{1} << 31) + 5;
  const OpSpec s = residual_relu(DType::f32);
  for (const char* name : kArms) {
    kq::IKernelArm* a = arm(name);
    float *x, *r, *o;
    const std::size_t bytes = static_cast<std::size_t>(n) * 4;
    CUDA_OK(cudaMalloc(&x, bytes + 16));
    CUDA_OK(cudaMalloc(&r, bytes + 16));
    CUDA_OK(cudaMalloc(&o, bytes + 16));
    CUDA_OK(cudaMemset(x, 0x3F, bytes + 16));  // 0x3F3F3F3F = 0.7470...
    CUDA_OK(cudaMemset(r, 0x3E, bytes + 16));  // 0x3E3E3E3E = 0.1859...
    CUDA_OK(cudaMemset(o, 0xFF, bytes + 16));  // NaN
    // Offset by one element: a head, then vectors, and a tail beyond 2^31.
    std::vector<TensorView> ins{view(x + 1, DType::f32, {n}), view(r + 1, DType::f32, {n})};
    std::vector<TensorView> outs{view(o + 1, DType::f32, {n})};
    kq::Problem p{&s, ins, outs};
    REQUIRE(a->prepare(p).is_ok());
    REQUIRE(a->run(ins, outs, nullptr).is_ok());
    CUDA_OK(cudaDeviceSynchronize());
    float xv, rv;
    std::memset(&xv, 0x3F, 4);
    std::memset(&rv, 0x3E, 4);
    const float want = static_cast<float>(static_cast<double>(xv) + rv);
    const std::int64_t chunk = 1 << 20;
    std::vector<float> h(chunk + 2);
    // The first elements, the last before 2^31, and the end (the allocation holds n + 4).
    for (std::int64_t start : {std::int64_t{0}, (std::int64_t{1} << 31) - chunk, n - chunk}) {
      INFO(name << ": elements " << start << " to " << start + chunk + 2);
      CUDA_OK(cudaMemcpy(h.data(), o + start, static_cast<std::size_t>(chunk + 2) * 4,
                         cudaMemcpyDeviceToHost));
      std::int64_t bad = 0;
      for (std::int64_t j = 0; j < chunk + 2; ++j) {
        const std::int64_t e = start + j;  // index into o; elements 1..n are the view
        const bool inside = e >= 1 && e <= n;
        const bool ok = inside ? h[j] == want : std::isnan(h[j]);
        bad += !ok;
      }
      CHECK_MESSAGE(bad == 0, name << ": " << bad << " wrong elements near " << start);
    }
    cudaFree(x);
    cudaFree(r);
    cudaFree(o);
  }
}

#endif  // KQ_HAVE_CUDA
