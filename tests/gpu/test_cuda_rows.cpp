// GPU test of the cuda_rows arms (plugins/cuda_rows): each on the shipped specs it takes, at
// shapes that reach every kernel (the register-resident shapes, the looped kernel with 16-byte
// vectors and with single elements: odd N, a row of 50257, x and y one element off 16 bytes),
// against a float64 reference within a few units of the output's precision, with the bytes past
// each output checked untouched. Skips without a usable CUDA device
// (tests/support/gpu_main.cpp); built without CUDA, one case saying so.
#include <doctest/doctest.h>

#ifndef KQ_HAVE_CUDA
TEST_CASE("cuda_rows arms") { MESSAGE("skipped: no CUDA device (kq was built without CUDA)"); }
#else
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fused_arms.hpp"
#include "kq/half.hpp"
#include "spec/spec.hpp"

namespace {

constexpr std::size_t kPad = 64;  // guard bytes after each tensor
constexpr unsigned char kGuard = 0xAB;

struct Tensor {
  kq::TensorView view;
  std::vector<unsigned char> host;  // the elements, in the view's dtype
  void* base = nullptr;             // the allocation (view.data is 4 * `shift` bytes in)
  std::size_t bytes = 0;            // of the elements
};

struct Problem {
  std::vector<Tensor> inputs, outputs;
  ~Problem() {
    for (auto* list : {&inputs, &outputs})
      for (Tensor& t : *list) cudaFree(t.base);
  }
};

Tensor make_tensor(const kq::ix::TensorDecl& d, const std::map<std::string, std::int64_t>& dims,
                   const std::vector<kq::ix::DimDecl>& names, int shift) {
  Tensor t;
  t.view.dtype = d.dtype;
  t.view.device = kq::Device::cuda;
  t.view.rank = static_cast<int>(d.shape.size());
  for (int i = 0; i < t.view.rank; ++i) {
    const kq::ix::Extent& e = d.shape[static_cast<std::size_t>(i)];
    t.view.shape[i] =
        e.is_dim() ? dims.at(names[static_cast<std::size_t>(e.dim)].name) : e.constant;
  }
  std::int64_t stride = 1;
  for (int i = t.view.rank - 1; i >= 0; --i) {
    t.view.strides[i] = stride;
    stride *= t.view.shape[i];
  }
  const std::size_t size = kq::dtype_size(d.dtype);
  t.bytes = static_cast<std::size_t>(t.view.numel()) * size;
  t.host.resize(t.bytes);
  // In 4-byte steps: the specs' default contract admits 4-byte alignment, not 2 (bf16 + 1).
  const std::size_t offset = 4 * static_cast<std::size_t>(shift);
  CUDA_OK(cudaMalloc(&t.base, t.bytes + offset + kPad));
  CUDA_OK(cudaMemset(t.base, kGuard, t.bytes + offset + kPad));
  t.view.data = static_cast<char*>(t.base) + offset;
  return t;
}

double at(const Tensor& t, std::int64_t i) {
  return kq::load_as_double(t.view.dtype, t.host.data() + i * kq::dtype_size(t.view.dtype));
}

// The float64 reference of output `o` (element i of the flattened output) from the inputs as
// stored: x's first dim the rows, the rest one row.
std::vector<std::vector<double> > reference(const std::string& op, const Problem& p, double eps) {
  const Tensor& x = p.inputs[0];
  const std::int64_t rows = x.view.shape[0], n = x.view.numel() / std::max<std::int64_t>(rows, 1);
  std::vector<std::vector<double> > out(p.outputs.size());
  out[0].resize(static_cast<std::size_t>(rows * n));
  if (out.size() == 3) out[1].resize(rows), out[2].resize(rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    auto xv = [&](std::int64_t c) { return at(x, r * n + c); };
    auto y = [&](std::int64_t c) -> double& { return out[0][static_cast<std::size_t>(r * n + c)]; };
    if (op == "softmax" || op == "log_softmax") {
      double mx = -INFINITY, s = 0;
      for (std::int64_t c = 0; c < n; ++c) mx = std::max(mx, xv(c));
      for (std::int64_t c = 0; c < n; ++c) s += std::exp(xv(c) - mx);
      for (std::int64_t c = 0; c < n; ++c)
        y(c) = op == "softmax" ? std::exp(xv(c) - mx) / s : xv(c) - mx - std::log(s);
    } else if (op == "layer_norm") {
      double mean = 0, var = 0;
      for (std::int64_t c = 0; c < n; ++c) mean += xv(c);
      mean /= static_cast<double>(n);
      for (std::int64_t c = 0; c < n; ++c) var += (xv(c) - mean) * (xv(c) - mean);
      var /= static_cast<double>(n);
      const double rstd = 1 / std::sqrt(var + eps);
      for (std::int64_t c = 0; c < n; ++c)
        y(c) = (xv(c) - mean) * rstd * at(p.inputs[1], c) + at(p.inputs[2], c);
      if (out.size() == 3) out[1][r] = mean, out[2][r] = rstd;
    } else {
      double ss = 0;
      for (std::int64_t c = 0; c < n; ++c) ss += xv(c) * xv(c);
      const double rstd = 1 / std::sqrt(ss / static_cast<double>(n) + eps);
      for (std::int64_t c = 0; c < n; ++c) y(c) = xv(c) * rstd * at(p.inputs[1], c);
    }
  }
  return out;
}

// How far `got` may be from `want`: two ulps of a half type (computed in float, rounded once),
// 16 of float (exp, the sums, a product by 1 / sum), relative, plus as many of the terms' size
// where an op cancels (layer norm's + b, log_softmax's subtractions). Loose next to the specs'
// own compare rules, which qualification applies; this catches wrong rows, tails and offsets.
double tolerance(kq::DType t, double want, double scale) {
  const double ulps = t == kq::DType::bf16  ? 2 * 0x1p-7
                      : t == kq::DType::f16 ? 2 * 0x1p-10
                                            : 16 * 0x1p-23;
  return ulps * (std::fabs(want) + scale) + 1e-30;
}

struct Shape {
  std::map<std::string, std::int64_t> dims;
  int shift = 0;  // x and y 4 * shift bytes off their allocation's 256-byte alignment
};

void check_arm(const std::string& arm_name, const std::string& op, const std::string& spec_file,
               const std::vector<Shape>& shapes) {
  kq::IKernelArm* arm = kq::test::plugin_arm("kq_cuda_rows", arm_name);
  REQUIRE_MESSAGE(arm != nullptr, arm_name);
  const kq::Spec spec = kq::load_spec(kq::test::source_dir() / "specs" / spec_file);
  REQUIRE_MESSAGE(arm->supports(spec.op).is_ok(), arm->supports(spec.op).message());
  const kq::ix::Program& prog = *spec.op.program;
  const double eps = prog.decls.params.empty() ? 0 : prog.decls.params[0].value;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> value(-4.0, 4.0);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const Shape& s : shapes) {
    std::string name = arm_name + " " + spec_file;
    for (const auto& [d, v] : s.dims) name += " " + d + "=" + std::to_string(v);
    name += " shift " + std::to_string(s.shift);
    INFO(name);
    Problem p;
    bool first_in = true, first_out = true;
    for (const kq::ix::TensorDecl& d : prog.decls.tensors) {
      if (d.role == kq::ix::Role::temporary) continue;
      const bool in = d.role == kq::ix::Role::input;
      const int shift = (in ? first_in : first_out) ? s.shift : 0;
      (in ? first_in : first_out) = false;
      (in ? p.inputs : p.outputs).push_back(make_tensor(d, s.dims, prog.decls.dims, shift));
    }
    for (Tensor& t : p.inputs) {
      const std::size_t size = kq::dtype_size(t.view.dtype);
      for (std::int64_t i = 0; i < t.view.numel(); ++i)
        kq::store_rounded(t.view.dtype, value(rng), t.host.data() + i * size);
      CUDA_OK(cudaMemcpy(t.view.data, t.host.data(), t.bytes, cudaMemcpyHostToDevice));
    }
    kq::Problem problem;
    problem.spec = &spec.op;
    problem.stream = stream;
    for (Tensor& t : p.inputs) problem.inputs.push_back(t.view);
    for (Tensor& t : p.outputs) problem.outputs.push_back(t.view);
    const kq::Status prepared = arm->prepare(problem);
    REQUIRE_MESSAGE(prepared.is_ok(), prepared.message());
    const kq::Status ran = arm->run(problem.inputs, problem.outputs, stream);
    REQUIRE_MESSAGE(ran.is_ok(), ran.message());
    CUDA_OK(cudaStreamSynchronize(stream));
    const auto want = reference(op, p, eps);
    for (std::size_t o = 0; o < p.outputs.size(); ++o) {
      Tensor& t = p.outputs[o];
      std::vector<unsigned char> guard(kPad);
      CUDA_OK(cudaMemcpy(t.host.data(), t.view.data, t.bytes, cudaMemcpyDeviceToHost));
      CUDA_OK(cudaMemcpy(guard.data(), static_cast<char*>(t.view.data) + t.bytes, kPad,
                         cudaMemcpyDeviceToHost));
      for (unsigned char g : guard) REQUIRE_MESSAGE(g == kGuard, "written past output " << o);
      int bad = 0;
      for (std::int64_t i = 0; i < t.view.numel() && bad < 5; ++i) {
        const double w = want[o][static_cast<std::size_t>(i)], g = at(t, i);
        // The terms' size: 1 for softmax (|y| <= 1), the row's |x - max| for log_softmax, w's
        // and b's for layer norm's y (|x - mean| * rstd is a few at most).
        const double scale = op == "softmax" ? 0.0 : op == "log_softmax" ? 16.0 : 8.0;
        if (!(std::fabs(g - w) <= tolerance(t.view.dtype, w, o == 0 ? scale : 0.0))) {
          ++bad;
          CHECK_MESSAGE(false, "output " << o << " element " << i << ": " << g << ", want " << w);
        }
      }
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
}

std::vector<Shape> mn(std::vector<std::pair<std::int64_t, std::int64_t> > list, int shift = 0) {
  std::vector<Shape> out;
  for (auto [m, n] : list) out.push_back({{{"M", m}, {"N", n}}, shift});
  return out;
}

// Rows in registers (4096, 16384: aligned), looped with vectors (65536) and with elements (odd,
// 50257, one element off alignment), and the smallest.
std::vector<Shape> row_shapes() {
  auto s = mn({{3, 4096}, {2, 16384}, {2, 65536}, {5, 4097}, {2, 50257}, {1, 1}, {7, 3}});
  for (Shape& x : mn({{4, 4096}, {3, 1000}}, 1)) s.push_back(x);
  return s;
}

}  // namespace

TEST_CASE("cuda_softmax") {
  check_arm("cuda_softmax", "softmax", "softmax_bf16.yaml", row_shapes());
  check_arm("cuda_softmax", "softmax", "kernelbench/23_softmax.yaml", row_shapes());
}

TEST_CASE("cuda_log_softmax") {
  check_arm("cuda_log_softmax", "log_softmax", "kernelbench/24_log_softmax.yaml", row_shapes());
}

TEST_CASE("cuda_layer_norm") {
  check_arm("cuda_layer_norm", "layer_norm", "layer_norm_bf16.yaml", row_shapes());
  // Over (C, H, W): rows of 105 (elements) and 512 (in registers) floats.
  check_arm("cuda_layer_norm", "layer_norm", "kernelbench/40_layer_norm.yaml",
            {{{{"B", 2}, {"C", 3}, {"H", 5}, {"W", 7}}, 0},
             {{{"B", 3}, {"C", 4}, {"H", 8}, {"W", 16}}, 0}});
}

TEST_CASE("cuda_rms_norm") {
  check_arm("cuda_rms_norm", "rms_norm", "rms_norm_bf16.yaml", row_shapes());
}
#endif
